import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

export interface KeyLabel {
  name: string;
  prefix: string;
}

/** Name and prefix of the keys a page of tasks was submitted with (deleted keys included: the task outlives them). */
export async function keyLabels(db: Kysely<Database>, keyIds: string[]): Promise<Map<string, KeyLabel>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.selectFrom('api_keys').select(['id', 'name', 'key_prefix']).where('id', 'in', [...new Set(keyIds)]).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, prefix: r.key_prefix }]));
}

/**
 * Why a task's callback address was refused at submit, per task. Such a task stores no callback
 * (the refusal is silent to the caller), so without this the holder would not know one was asked for.
 */
export async function refusedCallbacks(db: Kysely<Database>, taskIds: string[]): Promise<Map<string, { url: string; reason: string }>> {
  if (taskIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_attempts')
    .select(['task_id', 'url', 'error'])
    .where('task_id', 'in', taskIds)
    .where('outcome', '=', 'refused')
    .orderBy('id')
    .execute();
  return new Map(rows.map((r) => [r.task_id, { url: r.url, reason: (r.error ?? 'refused').replace(/^refused: /, '') }]));
}
