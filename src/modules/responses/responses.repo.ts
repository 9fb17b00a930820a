import type { Kysely } from 'kysely';
import { compiledStatement } from '../../db/prepared.ts';
import type { Database } from '../../db/types.ts';

// Stored /v1/responses answers, per account, until they expire.

export interface StoredResponse {
  response: string;
  conversation: string;
  /** The channel whose upstream keeps the response too; null: only the gateway does. */
  channel_id: string | null;
}

export async function findResponse(db: Kysely<Database>, userId: string, id: string, now: number): Promise<StoredResponse | undefined> {
  return db
    .selectFrom('responses')
    .select(['response', 'conversation', 'channel_id'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

const STORED_COLUMNS = ['id', 'user_id', 'response', 'conversation', 'channel_id', 'created_at', 'expires_at'] as const;

// Compiled once: building the upsert with Kysely for every answer was a third of storing it, and
// the conflict's new values are the `excluded` row's, so the answer's text is bound once, not twice.
const upsert = compiledStatement((db) =>
  db
    .insertInto('responses')
    .values(Object.fromEntries(STORED_COLUMNS.map((c) => [c, null])) as never)
    .onConflict((c) => c.column('id').doUpdateSet((eb) => Object.fromEntries(STORED_COLUMNS.slice(1).map((column) => [column, eb.ref(`excluded.${column}`)])) as never)),
);

/** Keeps an answer; an id seen again (an upstream that reuses ids) keeps the newer one. */
export async function storeResponse(db: Kysely<Database>, row: Omit<Database['responses'], 'channel_id'> & { id: string; channel_id?: string | null }): Promise<void> {
  await upsert(db, STORED_COLUMNS.map((column) => row[column] ?? null));
}

/** Deletes up to `limit` expired answers; returns how many went. */
export async function deleteExpiredResponses(db: Kysely<Database>, now: number, limit: number): Promise<number> {
  const ids = db.selectFrom('responses').select('id').where('expires_at', '<=', now).limit(limit);
  const result = await db.deleteFrom('responses').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
