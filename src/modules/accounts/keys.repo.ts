import type { Kysely } from 'kysely';
import type { ApiKey, ApiKeyUpdate, Database, NewApiKey } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';

export async function insertKey(db: Kysely<Database>, key: NewApiKey): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

const byHash = preparedQuery((db, hash: string) => db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash));
const byId = preparedQuery((db, id: string) => db.selectFrom('api_keys').selectAll().where('id', '=', id));

export async function findKeyByHash(db: Kysely<Database>, hash: string): Promise<ApiKey | undefined> {
  return (await byHash(db, hash))[0];
}

export async function getKey(db: Kysely<Database>, id: string): Promise<ApiKey | undefined> {
  return (await byId(db, id))[0];
}

export type KeyQuota = Pick<ApiKey, 'status' | 'unlimited' | 'quota_remain' | 'quota_used'>;
const quotaById = preparedQuery((db, id: string) =>
  db.selectFrom('api_keys').select(['status', 'unlimited', 'quota_remain', 'quota_used']).where('id', '=', id),
);

/** Just what the balance route shows: read on every call, so kept narrow. */
export async function getKeyQuota(db: Kysely<Database>, id: string): Promise<KeyQuota | undefined> {
  return (await quotaById(db, id))[0];
}

export function listKeys(db: Kysely<Database>, userId: string): Promise<ApiKey[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('status', '!=', 'deleted')
    .orderBy('id')
    .execute();
}

export async function updateKey(db: Kysely<Database>, id: string, changes: ApiKeyUpdate): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ ...changes, updated_at: Date.now() })
    .where('id', '=', id)
    .where('status', '!=', 'deleted')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Keys changed at or after `since` (ms): other processes drop them from their caches. */
export function keysChangedSince(db: Kysely<Database>, since: number): Promise<Pick<ApiKey, 'key_hash' | 'updated_at'>[]> {
  return db.selectFrom('api_keys').select(['key_hash', 'updated_at']).where('updated_at', '>=', since).execute();
}
