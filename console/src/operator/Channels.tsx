import { Fragment, useState, type FormEvent } from 'react';
import { api, type Channel, type ChannelTypeInfo } from '../api.ts';
import { ErrorNote, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { OptionFields, optionDrafts, optionsBody, type OptionDrafts } from './ChannelOptions.tsx';

interface Draft {
  name: string;
  type: string;
  base_url: string;
  secret: string;
  models: string;
  model_mapping: string;
  priority: string;
  weight: string;
  options: OptionDrafts;
}

// No type yet: the form shows the registry's first until one is chosen.
const emptyDraft: Draft = { name: '', type: '', base_url: '', secret: '', models: '', model_mapping: '{}', priority: '0', weight: '1', options: {} };

function draftOf(channel: Channel): Draft {
  return {
    name: channel.name,
    type: channel.type,
    base_url: channel.base_url ?? '',
    secret: '',
    models: channel.models.join(', '),
    model_mapping: JSON.stringify(channel.model_mapping),
    priority: String(channel.priority),
    weight: String(channel.weight),
    options: optionDrafts(channel.options),
  };
}

function bodyOf(draft: Draft, info: ChannelTypeInfo | undefined, editing: boolean) {
  let mapping: Record<string, string>;
  try {
    mapping = JSON.parse(draft.model_mapping || '{}');
  } catch {
    throw new Error('Model mapping must be a JSON object, e.g. {"chatgen-4-haiku": "upstream-name"}');
  }
  return {
    name: draft.name,
    type: draft.type,
    base_url: draft.base_url || null,
    // Secrets are never shown back; an empty field while editing keeps the stored one.
    ...(draft.secret || !editing ? { secret: draft.secret || null } : {}),
    models: draft.models.split(',').map((m) => m.trim()).filter(Boolean),
    model_mapping: mapping,
    priority: Number(draft.priority),
    weight: Number(draft.weight),
    options: optionsBody(info, draft.options, editing),
  };
}

export function Channels() {
  const channels = useLoad<{ data: Channel[] }>('/admin/channels');
  const types = useLoad<{ data: ChannelTypeInfo[] }>('/admin/channel-types');
  const [editing, setEditing] = useState<string | undefined>();
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [tested, setTested] = useState<Record<string, string>>({});
  const action = useAction();
  const type = draft.type || types.data?.data[0]?.type || '';
  const info = types.data?.data.find((t) => t.type === type);
  const stored = channels.data?.data.find((c) => c.id === editing);

  const save = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const body = { ...bodyOf(draft, info, editing !== undefined), type };
      if (editing) await api('PATCH', `/admin/channels/${editing}`, body);
      else await api('POST', '/admin/channels', body);
      setEditing(undefined);
      setDraft(emptyDraft);
      await channels.reload();
    });
  };
  const toggle = (channel: Channel) =>
    action.run(async () => {
      await api('PATCH', `/admin/channels/${channel.id}`, { status: channel.status === 'enabled' ? 'disabled' : 'enabled' });
      await channels.reload();
    });
  const test = (channel: Channel) =>
    action.run(async () => {
      setTested((t) => ({ ...t, [channel.id]: 'testing…' }));
      const result = await api<{ ok: boolean; latency_ms: number; detail: string }>('POST', `/admin/channels/${channel.id}/test`);
      setTested((t) => ({ ...t, [channel.id]: `${result.ok ? 'OK' : 'Failed'} in ${result.latency_ms} ms: ${result.detail}` }));
    });
  const field = (name: Exclude<keyof Draft, 'options'>, label: string, props: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })} {...props} />
    </label>
  );

  return (
    <>
      <Section title="Configured channels">
        <ErrorNote message={channels.error ?? types.error ?? action.error} />
        <TableRegion label="Channels">
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Models</th>
                <th scope="col">Priority / weight</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {channels.data?.data.map((channel) => (
                <tr key={channel.id}>
                  <td data-label="Name">
                    {channel.name}
                    {tested[channel.id] && <div className="muted" role="status">{tested[channel.id]}</div>}
                  </td>
                  <td data-label="Type">{channel.type}</td>
                  <td data-label="Models" className="models">
                    {/* A model id breaks between ids, never at its own hyphens. */}
                    {channel.models.map((model, i) => (
                      <Fragment key={model}>
                        {i > 0 && ', '}
                        <span className="nowrap">{model}</span>
                      </Fragment>
                    ))}
                  </td>
                  <td data-label="Priority / weight">
                    {channel.priority} / {channel.weight}
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={channel.status} />
                    {channel.health.needs_attention && <div className="error">Needs attention: {channel.health.last_error}</div>}
                    {!channel.health.needs_attention && channel.health.consecutive_failures > 0 && (
                      <div className="muted">{channel.health.consecutive_failures} failed submits: {channel.health.last_error}</div>
                    )}
                  </td>
                  <td className="actions">
                    <div className="row-actions">
                    <button type="button" className="secondary" onClick={() => test(channel)}>
                      Test
                    </button>
                    <button type="button" className="secondary" onClick={() => { setEditing(channel.id); setDraft(draftOf(channel)); }}>
                      Edit
                    </button>
                    <button type="button" className="secondary" onClick={() => toggle(channel)}>
                      {channel.status === 'enabled' ? 'Disable' : 'Enable'}
                    </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      </Section>
      <Section title={editing ? 'Edit channel' : 'Add a channel'}>
        <form className="grid-form" onSubmit={save}>
          {field('name', 'Name', { required: true })}
          <label>
            Type
            {/* Another type has other options: the ones typed for the last type are dropped. */}
            <select value={type} onChange={(e) => setDraft({ ...draft, type: e.target.value, options: {} })}>
              {types.data?.data.map((t) => (
                <option key={t.type} value={t.type} title={t.summary}>
                  {t.type}
                </option>
              ))}
            </select>
          </label>
          {info?.base_url !== 'none' && field('base_url', 'Base URL', { type: 'url', placeholder: 'https://upstream.example' })}
          {info?.base_url !== 'none' && field('secret', editing ? 'Secret (empty keeps the stored one)' : 'Secret', { type: 'password', autoComplete: 'off' })}
          {field('models', 'Models (comma separated, * for all)', { required: true })}
          {field('model_mapping', 'Model mapping (JSON)')}
          {field('priority', 'Priority', { type: 'number' })}
          {field('weight', 'Weight', { type: 'number', min: 1 })}
          <OptionFields info={info} drafts={draft.options} stored={stored?.type === type ? stored.options : undefined} onChange={(options) => setDraft({ ...draft, options })} />
          <div className="form-actions">
            <button type="submit" disabled={action.busy}>
              {editing ? 'Save channel' : 'Add channel'}
            </button>
            {editing && (
              <button type="button" className="secondary" onClick={() => { setEditing(undefined); setDraft(emptyDraft); }}>
                Cancel
              </button>
            )}
          </div>
        </form>
      </Section>
    </>
  );
}
