import { type Account, type Key, type KeyUsage } from '../api.ts';
import { ErrorNote, Money, Section, Stat, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { Keys } from './Keys.tsx';
import { Redeem } from './Redeem.tsx';

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
            <Stat label="Remaining" value={<Money value={account.data.remain_balance} />} testId="remain-balance" />
            <Stat label="Used" value={<Money value={account.data.used_balance} />} testId="used-balance" />
            {/* In credits the balance already is the credits: the same number twice would only puzzle. */}
            {account.data.billing_unit === 'usd' && (
              <>
                <Stat label="Remaining credits" value={account.data.remain_credits.toLocaleString('en-US')} />
                <Stat label="Used credits" value={account.data.used_credits.toLocaleString('en-US')} />
              </>
            )}
          </div>
        )}
        <Redeem onRedeemed={account.reload} />
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
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Text calls</th>
                <th scope="col">Tokens in / out</th>
                <th scope="col">Cached read / write</th>
                <th scope="col">Text cost</th>
                <th scope="col">Tasks</th>
                <th scope="col">Task cost</th>
              </tr>
            </thead>
            <tbody>
              {usage.data?.data.map((u) => (
                <tr key={u.key_id}>
                  <td data-label="Key">{u.name}</td>
                  <td data-label="Text calls">{u.text_calls.toLocaleString('en-US')}</td>
                  <td data-label="Tokens in / out">
                    {u.input_tokens.toLocaleString('en-US')} / {u.output_tokens.toLocaleString('en-US')}
                  </td>
                  <td data-label="Cached read / write">
                    {u.cache_read_tokens.toLocaleString('en-US')} / {u.cache_write_tokens.toLocaleString('en-US')}
                  </td>
                  <td data-label="Text cost">
                    <Money value={u.text_cost} />
                    <div className="muted">
                      in <Money value={u.text_cost_by_class.input} />, cached <Money value={u.text_cost_by_class.cache_read} />, cache write <Money value={u.text_cost_by_class.cache_write} />, out{' '}
                      <Money value={u.text_cost_by_class.output} />
                    </div>
                  </td>
                  <td data-label="Tasks">{u.tasks.toLocaleString('en-US')}</td>
                  <td data-label="Task cost">
                    <Money value={u.task_cost} />
                  </td>
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
