import { Fragment, useState, type FormEvent } from 'react';
import { api, unitName, when, type Key } from '../api.ts';
import { ErrorNote, Money, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useAction, useCopy } from '../hooks.ts';
import { emptyPolicyText, keySummary, LogBodiesField, PolicyEditor, PolicyFields, policyFromText } from '../KeyPolicy.tsx';

// The account holder's keys: create (with limits), disable, delete, and narrow a key's limits.

export function Keys({ keys, error, onChange }: { keys?: Key[]; error?: string; onChange: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [unlimited, setUnlimited] = useState(true);
  const [quota, setQuota] = useState('');
  const [rateLimit, setRateLimit] = useState('');
  const [policy, setPolicy] = useState(emptyPolicyText);
  const [logBodies, setLogBodies] = useState(false);
  const [secret, setSecret] = useState<string | undefined>();
  const copier = useCopy();
  const [editing, setEditing] = useState<string | undefined>();
  const action = useAction();

  const create = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const limits = policyFromText(policy);
      const body = {
        name,
        ...(unlimited ? { unlimited: true } : { quota: Number(quota) }),
        ...(rateLimit ? { rate_limit_rpm: Number(rateLimit) } : {}),
        ...(limits.models.length ? { models: limits.models } : {}),
        ...(limits.allowed_ips.length ? { allowed_ips: limits.allowed_ips } : {}),
        ...(limits.expires_at !== null ? { expires_at: limits.expires_at } : {}),
        ...(logBodies ? { log_bodies: true } : {}),
      };
      const created = await api<Key & { key: string }>('POST', '/console/api/keys', body);
      setSecret(created.key);
      copier.reset();
      setName('');
      setPolicy(emptyPolicyText);
      setLogBodies(false);
      await onChange();
    });
  };
  const setStatus = (key: Key, status: 'active' | 'disabled') =>
    action.run(async () => {
      await api('PATCH', `/console/api/keys/${key.id}`, { status });
      await onChange();
    });
  const remove = (key: Key) =>
    action.run(async () => {
      if (!window.confirm(`Delete key "${key.name}"? Calls with it are refused from then on.`)) return;
      await api('DELETE', `/console/api/keys/${key.id}`);
      await onChange();
    });

  return (
    <Section title="API keys">
      <form className="inline-form" onSubmit={create} aria-label="Create a key">
        <label>
          Name
          <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={unlimited} onChange={(e) => setUnlimited(e.target.checked)} />
          Unlimited
        </label>
        {!unlimited && (
          <label>
            Quota ({unitName()})
            <input type="number" min="0" step="any" required value={quota} onChange={(e) => setQuota(e.target.value)} />
          </label>
        )}
        <label>
          Rate limit (per minute)
          <input type="number" min="1" placeholder="default" value={rateLimit} onChange={(e) => setRateLimit(e.target.value)} />
        </label>
        <PolicyFields value={policy} onChange={setPolicy} />
        <LogBodiesField checked={logBodies} onChange={setLogBodies} />
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
      </form>
      {secret && (
        <div className="secret" role="status">
          <p>Copy this key now: it is shown only once.</p>
          <code data-testid="new-key">{secret}</code>
          <button type="button" onClick={() => copier.copy(secret)}>
            {copier.label}
          </button>
        </div>
      )}
      <ErrorNote message={error ?? action.error} />
      <TableRegion label="API keys">
        <table className="stack">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Quota set</th>
              <th scope="col">Quota left</th>
              <th scope="col">Used</th>
              <th scope="col">Rate limit</th>
              <th scope="col">Limits</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys?.map((key) => (
              <Fragment key={key.id}>
                <tr data-testid={`key-${key.name}`}>
                  <td data-label="Name">{key.name}</td>
                  <td data-label="Key">
                    <code className="prefix">{key.prefix}…</code>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={key.status} />
                  </td>
                  {/* The key stores what is left and what was spent: what was set is their sum. */}
                  <td data-label="Quota set" data-testid="quota-set">
                    {key.unlimited ? 'unlimited' : <Money value={(key.quota ?? 0) + key.quota_used} />}
                  </td>
                  <td data-label="Quota left" data-testid="quota-left">
                    {key.unlimited ? '—' : <Money value={key.quota ?? 0} />}
                  </td>
                  <td data-label="Used">
                    <Money value={key.quota_used} />
                  </td>
                  <td data-label="Rate limit">{key.rate_limit_rpm === null ? 'default' : `${key.rate_limit_rpm}/min`}</td>
                  <td data-label="Limits" className="policy" data-testid="key-policy">
                    {keySummary(key)}
                  </td>
                  <td data-label="Created">{when(key.created_at)}</td>
                  <td className="actions">
                    <div className="row-actions">
                      {key.status === 'active' ? (
                        <button type="button" className="secondary" onClick={() => setStatus(key, 'disabled')}>
                          Disable
                        </button>
                      ) : (
                        <button type="button" className="secondary" onClick={() => setStatus(key, 'active')}>
                          Enable
                        </button>
                      )}
                      <button type="button" className="secondary" aria-expanded={editing === key.id} onClick={() => setEditing(editing === key.id ? undefined : key.id)} aria-label={`Limits of ${key.name}`}>
                        Limits
                      </button>
                      <button type="button" className="danger" onClick={() => remove(key)} aria-label={`Delete key ${key.name}`}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
                {editing === key.id && (
                  <tr>
                    <td colSpan={10} className="editor">
                      <PolicyEditor keyItem={key} path={`/console/api/keys/${key.id}`} onSaved={onChange} holder />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </TableRegion>
    </Section>
  );
}
