import type { Kysely } from 'kysely';
import { namedStatementsOf } from '../../db/index.ts';
import type { Database, Task } from '../../db/types.ts';

// Postgres: a whole batch of submits as ONE statement, outside BEGIN/COMMIT, so a batch costs one
// round trip instead of seven. Measured with 50 connections on one account: the seven round trips of
// the careful path kept each batch's transaction open ~8 ms while the database itself worked ~1 ms
// ("idle in transaction" 60% of the time), and every other batch waited for the account row.
//
// It is all or nothing. The holds are the same debits as the careful path (ledger-batch.ts), one
// UPDATE per account and per key for the batch's sum, and what makes them conditional is the tables'
// CHECK constraints (balance >= 0, quota_remain >= 0): when any account or key of the batch cannot
// pay its share, the statement fails, nothing of it is kept, and the batch goes through the careful
// path, which decides item by item. Rows are locked in the careful path's order (accounts by id, then
// keys by id), so the two paths cannot deadlock each other.

/** Every column of `tasks` with its Postgres type; a test checks this against the table. */
export const TASK_COLUMNS = [
  ['id', 'text'],
  ['user_id', 'text'],
  ['key_id', 'text'],
  ['kind', 'text'],
  ['model', 'text'],
  ['params', 'text'],
  ['status', 'text'],
  ['progress', 'int'],
  ['channel_id', 'text'],
  ['upstream_id', 'text'],
  ['hold_amount', 'bigint'],
  ['key_limited', 'int'],
  ['cost', 'bigint'],
  ['webhook', 'text'],
  ['result', 'text'],
  ['error_code', 'text'],
  ['error_message', 'text'],
  ['created_at', 'bigint'],
  ['started_at', 'bigint'],
  ['eta_at', 'bigint'],
  ['deadline_at', 'bigint'],
  ['completed_at', 'bigint'],
  ['updated_at', 'bigint'],
  ['webhook_round', 'int'],
] as const satisfies readonly (readonly [keyof Task, string])[];

const names = TASK_COLUMNS.map(([name]) => name).join(', ');
const NOW = `$${TASK_COLUMNS.length + 1}`;

export const SUBMIT_STATEMENT = `
with b as (
  select * from unnest(${TASK_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) as b(${names})
),
accounts_locked as materialized (
  select u.id, t.total from users u
  join (select user_id, sum(hold_amount)::bigint as total from b group by user_id) t on t.user_id = u.id
  order by u.id for no key update of u
),
accounts as (
  update users u set balance = u.balance - l.total, used = u.used + l.total, updated_at = ${NOW}
  from accounts_locked l where u.id = l.id
  returning u.id
),
keys_locked as materialized (
  select k.id, t.total, t.limited_total from api_keys k
  join (
    select key_id, sum(hold_amount)::bigint as total,
      sum(case when key_limited = 1 then hold_amount else 0 end)::bigint as limited_total
    from b group by key_id
  ) t on t.key_id = k.id
  -- Reading every account's UPDATE here, before any key is locked, keeps the lock order.
  where gateway_assert((select count(*) from accounts) = (select count(distinct user_id) from b), 'submit statement: an account row is missing')
  order by k.id for no key update of k
),
keys as (
  update api_keys k set quota_used = k.quota_used + l.total, quota_remain = k.quota_remain - l.limited_total
  from keys_locked l where k.id = l.id
  returning k.id
),
tasks_in as (
  insert into tasks (${names}) select ${names} from b
),
jobs_in as (
  insert into jobs (kind, task_id, run_at, attempts, created_at) select 'dispatch', id, created_at, 0, ${NOW} from b
),
ledger_in as (
  insert into ledger (user_id, key_id, kind, balance_delta, used_delta, key_remain_delta, key_used_delta, ref, note, created_at)
  select user_id, key_id, 'hold', -hold_amount, hold_amount, case when key_limited = 1 then -hold_amount else 0 end, hold_amount, id, null, ${NOW}
  from b
)
select gateway_assert(
  (select count(*) from accounts) = (select count(distinct user_id) from b)
    and (select count(*) from keys) = (select count(distinct key_id) from b),
  'submit statement: an account or key row is missing'
) as ok`;

/**
 * Writes the whole batch (holds, tasks, dispatch jobs, ledger rows) in one statement. Resolves
 * when every task was written; rejects, having written nothing, when any could not be (the caller
 * then takes the careful path). Undefined when the database is not Postgres.
 */
export function submitStatementFor(db: Kysely<Database>): ((tasks: Task[]) => Promise<void>) | undefined {
  const run = namedStatementsOf(db);
  if (!run) return undefined;
  return async (tasks) => {
    const columns = TASK_COLUMNS.map(([name]) => tasks.map((task) => task[name]));
    await run('gateway_submit_batch', SUBMIT_STATEMENT, [...columns, Date.now()]);
  };
}
