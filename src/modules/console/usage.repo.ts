import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

const DAY_MS = 86_400_000;

export interface KeyUsage {
  key_id: string;
  text_calls: number;
  input_tokens: number;
  output_tokens: number;
  text_cost: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Of text_cost, each token class's part (ledger units). */
  text_cost_by_class: Record<TextCostClass, number>;
  tasks: number;
  task_cost: number;
}

export const TEXT_COST_CLASSES = ['input', 'cache_read', 'cache_write', 'output'] as const;
export type TextCostClass = (typeof TEXT_COST_CLASSES)[number];

/** The sums of one key's text calls (usage rows); every field adds up across row ranges. */
export const TEXT_SPEND_SUMS = ['calls', 'input_tokens', 'output_tokens', 'cost', 'cache_read_tokens', 'cache_write_tokens', 'input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost'] as const;
export type TextSpend = { key_id: string } & Record<(typeof TEXT_SPEND_SUMS)[number], number>;

/**
 * What each of an account's keys has spent on text calls with a usage row id above `afterId`, and
 * the highest id summed (`afterId` when there is none). Usage rows are only ever inserted, so sums
 * can be carried forward from one id on. The first sum reads the covering index alone
 * (0015_key_spend_index). A later one (SQLite only: see key-spend.ts) seeks the ids after `afterId`
 * in `usage_user`, which SQLite's planner would not pick over the covering index by itself.
 */
export async function textSpendByKey(db: Kysely<Database>, userId: string, afterId = 0): Promise<{ byKey: TextSpend[]; throughId: number }> {
  const columns = TEXT_SPEND_SUMS.filter((c) => c !== 'calls').map((c) => `sum(${c}) as ${c}`).join(', ');
  const sums = sql.raw(`key_id, count(*) as calls, ${columns}, max(id) as last_id`);
  const query =
    afterId > 0
      ? sql<SpendRow>`select ${sums} from usage indexed by usage_user where user_id = ${userId} and id > ${afterId} group by key_id`
      : sql<SpendRow>`select ${sums} from usage where user_id = ${userId} group by key_id`;
  const { rows } = await query.execute(db);
  const byKey = rows.map((r) => Object.fromEntries([['key_id', r.key_id], ...TEXT_SPEND_SUMS.map((c) => [c, Number(r[c] ?? 0)])]) as TextSpend);
  return { byKey, throughId: rows.reduce((max, r) => Math.max(max, Number(r.last_id)), afterId) };
}

type SpendRow = { key_id: string; last_id: number | string } & Record<(typeof TEXT_SPEND_SUMS)[number], number | string | null>;

/** What each of an account's keys has spent on tasks (settled cost; a running task counts zero). */
export async function taskSpendByKey(db: Kysely<Database>, userId: string): Promise<{ key_id: string; count: number; cost: number }[]> {
  const rows = await db
    .selectFrom('tasks')
    .select((eb) => ['key_id', eb.fn.countAll<number>().as('count'), eb.fn.sum<number>(eb.fn.coalesce('cost', sql<number>`0`)).as('cost')])
    .where('user_id', '=', userId)
    .groupBy('key_id')
    .execute();
  return rows.map((r) => ({ key_id: r.key_id, count: Number(r.count), cost: Number(r.cost ?? 0) }));
}

export interface DayTotals {
  /** UTC day, YYYY-MM-DD. */
  date: string;
  requests: number;
  spend: number;
  completed: number;
  failed: number;
}

/**
 * Totals for each UTC day of the last `count` (today included, days without traffic as zeros so a
 * chart's axis is even): billed requests (text calls and task submits), what they cost in ledger
 * units (settled text calls and tasks), and task outcomes by the day the task was submitted.
 */
export async function totalsForLastDays(db: Kysely<Database>, count: number, now = Date.now()): Promise<DayTotals[]> {
  const today = Math.floor(now / DAY_MS);
  const first = today - count + 1;
  const sinceMs = first * DAY_MS;
  const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  const [text, tasks] = await Promise.all([
    db
      .selectFrom('usage')
      .select((eb) => [day.as('day'), eb.fn.countAll<number>().as('requests'), eb.fn.sum<number>('cost').as('spend')])
      .where('created_at', '>=', sinceMs)
      .groupBy(day)
      .execute(),
    db
      .selectFrom('tasks')
      .select((eb) => [
        day.as('day'),
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>(eb.fn.coalesce('cost', sql<number>`0`)).as('spend'),
        eb.fn.sum<number>(eb.case().when('status', '=', 'completed').then(1).else(0).end()).as('completed'),
        eb.fn.sum<number>(eb.case().when('status', '=', 'failed').then(1).else(0).end()).as('failed'),
      ])
      .where('created_at', '>=', sinceMs)
      .groupBy(day)
      .execute(),
  ]);
  const days = Array.from({ length: count }, (_, i): DayTotals => ({
    date: new Date((first + i) * DAY_MS).toISOString().slice(0, 10),
    requests: 0,
    spend: 0,
    completed: 0,
    failed: 0,
  }));
  // A row stamped after today (another process's clock ahead of ours) has no bar: skipped.
  const entry = (d: number) => days[d - first];
  for (const row of text) {
    const totals = entry(Number(row.day));
    if (!totals) continue;
    totals.requests += Number(row.requests);
    totals.spend += Number(row.spend ?? 0);
  }
  for (const row of tasks) {
    const totals = entry(Number(row.day));
    if (!totals) continue;
    totals.requests += Number(row.requests);
    totals.spend += Number(row.spend ?? 0);
    totals.completed += Number(row.completed ?? 0);
    totals.failed += Number(row.failed ?? 0);
  }
  return days;
}

export interface UsageFilter {
  userId?: string;
  /** Unix ms, inclusive. */
  from?: number;
  /** Unix ms, exclusive. */
  to?: number;
}

/** A page of text calls (usage rows) in id order, after the id `after`. */
export function usagePage(db: Kysely<Database>, filter: UsageFilter, after: number, limit: number) {
  let query = db.selectFrom('usage').selectAll().where('id', '>', after).orderBy('id').limit(limit);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
  return query.execute();
}

/** A page of tasks in id order, after the id `after`: what the usage export shows of each. */
export function taskUsagePage(db: Kysely<Database>, filter: UsageFilter, after: string, limit: number) {
  let query = db
    .selectFrom('tasks')
    .select(['id', 'key_id', 'kind', 'model', 'status', 'cost', 'hold_amount', 'created_at', 'input_tokens', 'output_tokens'])
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
  return query.execute();
}

export function keyNamesOf(db: Kysely<Database>, ids: string[]) {
  return db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', ids).execute();
}
