import type { Kysely } from 'kysely';
import { Db } from '../../db/db.ts';
import type { Database, Task } from '../../db/types.ts';
import { assertAmount } from '../billing/ledger-rows.ts';
import { ledgerRowsAllFound, ledgerMovementCtes } from '../billing/ledger-statement.ts';

// Postgres: a whole batch of submits as ONE statement, outside BEGIN/COMMIT, so a batch costs one
// round trip instead of seven. Measured with 50 connections on one account: the seven round trips of
// the careful path kept each batch's transaction open ~8 ms while the database itself worked ~1 ms
// ("idle in transaction" 60% of the time), and every other batch waited for the account row.
//
// It is all or nothing (billing/ledger-statement.ts): when any account or key of the batch cannot
// pay its share, the statement fails, nothing of it is kept, and the batch goes through the careful
// path, which decides item by item.

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
  ['input_tokens', 'int'],
  ['output_tokens', 'int'],
] as const satisfies readonly (readonly [keyof Task, string])[];

const names = TASK_COLUMNS.map(([name]) => name).join(', ');
const NOW = `$${TASK_COLUMNS.length + 1}`;

export const SUBMIT_STATEMENT = `
with b as (
  select * from unnest(${TASK_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) as b(${names})
),
holds as (
  select 'hold'::text as kind, user_id, key_id, key_limited, hold_amount as amount, id as ref, null::text as note from b
),
${ledgerMovementCtes('holds', NOW)},
tasks_in as (
  insert into tasks (${names}) select ${names} from b
),
jobs_in as (
  insert into jobs (kind, task_id, run_at, attempts, created_at) select 'dispatch', id, created_at, 0, ${NOW} from b
)
select ${ledgerRowsAllFound('holds')} as ok`;

/**
 * Writes the whole batch (holds, tasks, dispatch jobs, ledger rows) in one statement. Resolves
 * when every task was written; rejects, having written nothing, when any could not be (the caller
 * then takes the careful path). Undefined when the database is not Postgres.
 */
export function submitStatementFor(db: Kysely<Database>): ((tasks: Task[]) => Promise<void>) | undefined {
  const run = db instanceof Db ? db.namedStatements : undefined;
  if (!run) return undefined;
  return async (tasks) => {
    for (const task of tasks) assertAmount(task.hold_amount);
    const columns = TASK_COLUMNS.map(([name]) => tasks.map((task) => task[name]));
    await run('gateway_submit_batch', SUBMIT_STATEMENT, [...columns, Date.now()]);
  };
}
