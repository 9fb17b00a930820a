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

/** What each of an account's keys has spent: text calls from the usage rows, tasks from their settled cost. */
export async function usageByKey(db: Kysely<Database>, userId: string): Promise<KeyUsage[]> {
  const [text, tasks] = await Promise.all([
    db
      .selectFrom('usage')
      .select((eb) => [
        'key_id',
        eb.fn.countAll<number>().as('calls'),
        eb.fn.sum<number>('input_tokens').as('input_tokens'),
        eb.fn.sum<number>('output_tokens').as('output_tokens'),
        eb.fn.sum<number>('cost').as('cost'),
        eb.fn.sum<number>('cache_read_tokens').as('cache_read_tokens'),
        eb.fn.sum<number>('cache_write_tokens').as('cache_write_tokens'),
        eb.fn.sum<number>('input_cost').as('input_cost'),
        eb.fn.sum<number>('cache_read_cost').as('cache_read_cost'),
        eb.fn.sum<number>('cache_write_cost').as('cache_write_cost'),
        eb.fn.sum<number>('output_cost').as('output_cost'),
      ])
      .where('user_id', '=', userId)
      .groupBy('key_id')
      .execute(),
    db
      .selectFrom('tasks')
      .select((eb) => ['key_id', eb.fn.countAll<number>().as('count'), eb.fn.sum<number>(eb.fn.coalesce('cost', sql<number>`0`)).as('cost')])
      .where('user_id', '=', userId)
      .groupBy('key_id')
      .execute(),
  ]);
  const byKey = new Map<string, KeyUsage>();
  const entry = (keyId: string) => {
    let found = byKey.get(keyId);
    if (!found) byKey.set(keyId, (found = { key_id: keyId, text_calls: 0, input_tokens: 0, output_tokens: 0, text_cost: 0, cache_read_tokens: 0, cache_write_tokens: 0, text_cost_by_class: { input: 0, cache_read: 0, cache_write: 0, output: 0 }, tasks: 0, task_cost: 0 }));
    return found;
  };
  for (const row of text) {
    Object.assign(entry(row.key_id), {
      text_calls: Number(row.calls),
      input_tokens: Number(row.input_tokens ?? 0),
      output_tokens: Number(row.output_tokens ?? 0),
      text_cost: Number(row.cost ?? 0),
      cache_read_tokens: Number(row.cache_read_tokens ?? 0),
      cache_write_tokens: Number(row.cache_write_tokens ?? 0),
      text_cost_by_class: Object.fromEntries(TEXT_COST_CLASSES.map((c) => [c, Number(row[`${c}_cost`] ?? 0)])) as KeyUsage['text_cost_by_class'],
    });
  }
  for (const row of tasks) Object.assign(entry(row.key_id), { tasks: Number(row.count), task_cost: Number(row.cost ?? 0) });
  return [...byKey.values()];
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
