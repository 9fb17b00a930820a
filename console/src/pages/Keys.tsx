import { Fragment, useState, type FormEvent } from 'react';
import { api, money, when, type Key } from '../api.ts';
import { ErrorNote, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useAction } from '../hooks.ts';
import { emptyPolicyText, PolicyEditor, PolicyFields, policyFromText, policySummary } from '../KeyPolicy.tsx';

// The account holder's keys: create (with limits), disable, delete, and narrow a key's limits.

export function Keys({ keys, error, onChange }: { keys?: Key[]; error?: string; onChange: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [unlimited, setUnlimited] = useState(true);
  const [quota, setQuota] = useState('');
  const [rateLimit, setRateLimit] = useState('');
  const [policy, setPolicy] = useState(emptyPolicyText);
  const [secret, setSecret] = useState<string | undefined>();
  const [copied, setCopied] = useState(false);
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
      };
      const created = await api<Key & { key: string }>('POST', '/console/api/keys', body);
      setSecret(created.key);
      setCopied(false);
      setName('');
      setPolicy(emptyPolicyText);
      await onChange();
    });
  };
  const copy = async () => {
    await navigator.clipboard.writeText(secret!);
    setCopied(true);
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
            Quota
            <input type="number" min="0" step="any" required value={quota} onChange={(e) => setQuota(e.target.value)} />
          </label>
        )}
        <label>
          Rate limit (per minute)
          <input type="number" min="1" placeholder="default" value={rateLimit} onChange={(e) => setRateLimit(e.target.value)} />
        </label>
        <PolicyFields value={policy} onChange={setPolicy} />
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
      </form>
      {secret && (
        <div className="secret" role="status">
          <p>Copy this key now: it is shown only once.</p>
          <code data-testid="new-key">{secret}</code>
          <button type="button" onClick={copy}>
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
      <ErrorNote message={error ?? action.error} />
      <TableRegion label="API keys">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Quota</th>
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
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>
                    <StatusBadge status={key.status} />
                  </td>
                  <td>{key.unlimited ? 'unlimited' : money(key.quota ?? 0)}</td>
                  <td>{money(key.quota_used)}</td>
                  <td>{key.rate_limit_rpm ?? 'default'}</td>
                  <td className="policy" data-testid="key-policy">
                    {policySummary(key)}
                  </td>
                  <td>{when(key.created_at)}</td>
                  <td>
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
                    <td colSpan={9}>
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
