import type { Kysely, Transaction } from 'kysely';
import type { ApiKey, ApiKeyUpdate, Database, NewApiKey } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { pendingSql } from '../text-money/index.ts';

export async function insertKey(db: Kysely<Database>, key: NewApiKey): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

// With the account's group and status: the key cache holds them, so a call learns its prices, and
// that its account is disabled, without a query.
const byHash = preparedQuery((db, hash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('api_keys')
    .select(['users.group_name', 'users.status as account_status'])
    .where('api_keys.key_hash', '=', hash),
);
const byId = preparedQuery((db, id: string) => db.selectFrom('api_keys').selectAll().where('id', '=', id));

export async function findKeyByHash(db: Kysely<Database>, hash: string): Promise<(ApiKey & { group_name: string; account_status: 'active' | 'disabled' }) | undefined> {
  return (await byHash(db, hash))[0];
}

export async function getKey(db: Kysely<Database>, id: string): Promise<ApiKey | undefined> {
  return (await byId(db, id))[0];
}

export type KeyQuota = Pick<ApiKey, 'status' | 'unlimited' | 'quota_remain' | 'quota_used'>;
// With what text money holds on the key and has not spent added back, as for the account (accounts.repo.ts).
const quotaById = preparedQuery((db, heldLimited: string, held: string, id: string) =>
  db
    .selectFrom('api_keys')
    .select((eb) => [
      'status',
      'unlimited',
      eb('quota_remain', '+', pendingSql(eb, 'key', heldLimited, true)).as('quota_remain'),
      eb('quota_used', '-', pendingSql(eb, 'key', held)).as('quota_used'),
    ])
    .where('id', '=', id),
);

/** Just what the balance route shows: read on every call, so kept narrow. */
export async function getKeyQuota(db: Kysely<Database>, id: string): Promise<KeyQuota | undefined> {
  const row = (await quotaById(db, id, id, id))[0];
  return row && { ...row, quota_remain: Number(row.quota_remain), quota_used: Number(row.quota_used) };
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

/**
 * Takes the key's row lock for the rest of `trx` and reads the row under it. A write first: on
 * Postgres a debit waits for the change instead of committing under it, and on SQLite the
 * transaction holds the write lock from its first statement (a read lock cannot always become one).
 */
export function lockKey(trx: Transaction<Database>, id: string): Promise<ApiKey | undefined> {
  return trx.updateTable('api_keys').set({ updated_at: Date.now() }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** The columns an operator or account holder may change; anything else moves through the ledger or never. */
export interface KeySettings {
  name?: string;
  status?: 'active' | 'disabled';
  rate_limit_rpm?: number | null;
  log_bodies?: number;
  /** The policy columns (key-policy.ts policyColumns) and the operator's ceiling, JSON. */
  models?: string | null;
  allowed_ips?: string | null;
  expires_at?: number | null;
  policy_ceiling?: string | null;
}

export async function updateKeySettings(db: Kysely<Database>, id: string, settings: KeySettings): Promise<void> {
  const { name, status, rate_limit_rpm, log_bodies, models, allowed_ips, expires_at, policy_ceiling } = settings;
  await updateKey(db, id, { name, status, rate_limit_rpm, log_bodies, models, allowed_ips, expires_at, policy_ceiling });
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
export function keysChangedSince(db: Kysely<Database>, since: number): Promise<Pick<ApiKey, 'id' | 'key_hash' | 'updated_at'>[]> {
  return db.selectFrom('api_keys').select(['id', 'key_hash', 'updated_at']).where('updated_at', '>=', since).execute();
}
