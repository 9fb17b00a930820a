import { money, type Account, type Key, type KeyUsage } from '../api.ts';
import { ErrorNote, Section, Stat, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { Keys } from './Keys.tsx';

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
      <Section
        title="Usage per key"
        actions={
          <a className="button secondary" href="/console/api/usage.csv" download>
            Download usage CSV
          </a>
        }
      >
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
