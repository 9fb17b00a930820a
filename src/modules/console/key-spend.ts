import type { Db } from '../../db/db.ts';
import { taskSpendByKey, TEXT_COST_CLASSES, TEXT_SPEND_SUMS, textSpendByKey, type KeyUsage, type TextSpend } from './usage.repo.ts';

// A big account's spend per key is a sum over all its rows. SQLite sums on the event loop (~80 ms
// for 250,000 rows even from a covering index), so there the text calls' sums are kept per account
// and carried forward: each read adds only the usage rows after the last one it summed. That is
// sound on SQLite, where one writer commits ids in order and usage rows are never changed; on
// Postgres ids may commit out of order and the sum does not hold the event loop, so it is taken whole,
// once for all the reads of the account that arrive while it runs.

interface Carried {
  throughId: number;
  byKey: Map<string, TextSpend>;
}

const MAX_ACCOUNTS = 10_000;
const carriedOf = new WeakMap<Db, Map<string, Carried>>();
const runningOf = new WeakMap<Db, Map<string, Promise<KeyUsage[]>>>();

async function textSpend(db: Db, userId: string): Promise<Iterable<TextSpend>> {
  if (db.dialect !== 'sqlite') return (await textSpendByKey(db, userId)).byKey;
  let accounts = carriedOf.get(db);
  if (!accounts) carriedOf.set(db, (accounts = new Map()));
  const before = accounts.get(userId);
  const added = await textSpendByKey(db, userId, before?.throughId ?? 0);
  const byKey = new Map(before?.byKey);
  for (const row of added.byKey) {
    const sum = byKey.get(row.key_id);
    byKey.set(row.key_id, sum ? (Object.fromEntries([['key_id', row.key_id], ...TEXT_SPEND_SUMS.map((c) => [c, sum[c] + row[c]])]) as TextSpend) : row);
  }
  // Two reads at once may both add the same rows: only the one that reaches further is kept.
  const latest = accounts.get(userId);
  if (!latest || latest.throughId < added.throughId) {
    if (accounts.size >= MAX_ACCOUNTS) accounts.clear();
    accounts.set(userId, { throughId: added.throughId, byKey });
  }
  return byKey.values();
}

/** What each of an account's keys has spent: text calls from the usage rows, tasks from their settled cost. */
export function keySpend(db: Db, userId: string): Promise<KeyUsage[]> {
  let running = runningOf.get(db);
  if (!running) runningOf.set(db, (running = new Map()));
  let sum = running.get(userId);
  if (!sum) {
    sum = sumSpend(db, userId).finally(() => running.delete(userId));
    running.set(userId, sum);
  }
  return sum;
}

async function sumSpend(db: Db, userId: string): Promise<KeyUsage[]> {
  const [text, tasks] = await Promise.all([textSpend(db, userId), taskSpendByKey(db, userId)]);
  const byKey = new Map<string, KeyUsage>();
  const entry = (keyId: string) => {
    let found = byKey.get(keyId);
    if (!found) byKey.set(keyId, (found = { key_id: keyId, text_calls: 0, input_tokens: 0, output_tokens: 0, text_cost: 0, cache_read_tokens: 0, cache_write_tokens: 0, text_cost_by_class: { input: 0, cache_read: 0, cache_write: 0, output: 0 }, tasks: 0, task_cost: 0 }));
    return found;
  };
  for (const row of text) {
    const { calls, input_tokens, output_tokens, cost, cache_read_tokens, cache_write_tokens } = row;
    const byClass = Object.fromEntries(TEXT_COST_CLASSES.map((c) => [c, row[`${c}_cost`]])) as KeyUsage['text_cost_by_class'];
    Object.assign(entry(row.key_id), { text_calls: calls, input_tokens, output_tokens, text_cost: cost, cache_read_tokens, cache_write_tokens, text_cost_by_class: byClass });
  }
  for (const row of tasks) Object.assign(entry(row.key_id), { tasks: row.count, task_cost: row.cost });
  return [...byKey.values()];
}
