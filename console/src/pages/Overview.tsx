import { useState, type FormEvent } from 'react';
import { api, money, when, type Account, type Key, type KeyUsage } from '../api.ts';
import { ErrorNote, Section, Stat, StatusBadge, TableRegion } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';

export function Overview() {
  const account = useLoad<Account>('/console/api/account');
  const keys = useLoad<{ data: Key[] }>('/console/api/keys');
  const usage = useLoad<{ data: KeyUsage[] }>('/console/api/usage');
  const refresh = () => Promise.all([account.reload(), keys.reload(), usage.reload()]).then(() => undefined);

  return (
    <>
      <Section title="Balance">
        <ErrorNote message={account.error} />
        {account.data && (
          <div className="stats">
            <Stat label="Remaining" value={money(account.data.remain_balance)} testId="remain-balance" />
            <Stat label="Used" value={money(account.data.used_balance)} testId="used-balance" />
            <Stat label="Remaining credits" value={String(account.data.remain_credits)} />
            <Stat label="Used credits" value={String(account.data.used_credits)} />
          </div>
        )}
      </Section>
      <Keys keys={keys.data?.data} error={keys.error} onChange={refresh} />
      <Section title="Usage per key">
        <ErrorNote message={usage.error} />
        <TableRegion label="Usage per key">
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Text calls</th>
                <th scope="col">Tokens in / out</th>
                <th scope="col">Text cost</th>
                <th scope="col">Tasks</th>
                <th scope="col">Task cost</th>
              </tr>
            </thead>
            <tbody>
              {usage.data?.data.map((u) => (
                <tr key={u.key_id}>
                  <td>{u.name}</td>
                  <td>{u.text_calls}</td>
                  <td>
                    {u.input_tokens} / {u.output_tokens}
                  </td>
                  <td>{money(u.text_cost)}</td>
                  <td>{u.tasks}</td>
                  <td>{money(u.task_cost)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {usage.data?.data.length === 0 && <p className="muted">No calls yet.</p>}
        </TableRegion>
      </Section>
    </>
  );
}

function Keys({ keys, error, onChange }: { keys?: Key[]; error?: string; onChange: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [unlimited, setUnlimited] = useState(true);
  const [quota, setQuota] = useState('');
  const [rateLimit, setRateLimit] = useState('');
  const [secret, setSecret] = useState<string | undefined>();
  const [copied, setCopied] = useState(false);
  const action = useAction();

  const create = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const body = {
        name,
        ...(unlimited ? { unlimited: true } : { quota: Number(quota) }),
        ...(rateLimit ? { rate_limit_rpm: Number(rateLimit) } : {}),
      };
      const created = await api<Key & { key: string }>('POST', '/console/api/keys', body);
      setSecret(created.key);
      setCopied(false);
      setName('');
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
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys?.map((key) => (
              <tr key={key.id} data-testid={`key-${key.name}`}>
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
                  <button type="button" className="danger" onClick={() => remove(key)} aria-label={`Delete key ${key.name}`}>
                    Delete
                  </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
    </Section>
  );
}
