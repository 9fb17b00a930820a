import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

// Stored /v1/responses answers, per account, until they expire.

export interface StoredResponse {
  response: string;
  conversation: string;
}

export async function findResponse(db: Kysely<Database>, userId: string, id: string, now: number): Promise<StoredResponse | undefined> {
  return db
    .selectFrom('responses')
    .select(['response', 'conversation'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Keeps an answer; an id seen again (an upstream that reuses ids) keeps the newer one. */
export async function storeResponse(db: Kysely<Database>, row: Database['responses'] & { id: string }): Promise<void> {
  await db
    .insertInto('responses')
    .values(row)
    .onConflict((c) => c.column('id').doUpdateSet({ user_id: row.user_id, response: row.response, conversation: row.conversation, created_at: row.created_at, expires_at: row.expires_at }))
    .execute();
}

/** Deletes up to `limit` expired answers; returns how many went. */
export async function deleteExpiredResponses(db: Kysely<Database>, now: number, limit: number): Promise<number> {
  const ids = db.selectFrom('responses').select('id').where('expires_at', '<=', now).limit(limit);
  const result = await db.deleteFrom('responses').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
