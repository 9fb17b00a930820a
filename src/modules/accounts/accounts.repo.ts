import type { Kysely } from 'kysely';
import type { Database, User } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { pendingSql } from '../text-money/index.ts';

export async function insertUser(db: Kysely<Database>, user: { id: string; name: string; now: number }): Promise<void> {
  await db
    .insertInto('users')
    .values({ id: user.id, name: user.name, status: 'active', balance: 0, used: 0, created_at: user.now, updated_at: user.now })
    .execute();
}

export function getUser(db: Kysely<Database>, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Changes what a key cache entry holds of the account (its group, its status) and moves its keys'
 * updated_at in the same transaction, so every process's key cache reads them again; returns their
 * hashes, for this process to announce.
 */
export async function setUserForKeys(db: Kysely<Database>, id: string, changes: Partial<Pick<User, 'group_name' | 'status'>>): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const now = Date.now();
    await trx.updateTable('users').set({ ...changes, updated_at: now }).where('id', '=', id).execute();
    const keys = await trx.updateTable('api_keys').set({ updated_at: now }).where('user_id', '=', id).returning('key_hash').execute();
    return keys.map((k) => k.key_hash);
  });
}

/** Sets the alert fields given (undefined leaves one as it is) and re-arms the alert. */
export async function updateAlert(db: Kysely<Database>, id: string, alert: { alert_below?: number | null; alert_url?: string | null }): Promise<void> {
  await db.updateTable('users').set({ ...alert, alert_sent: 0, updated_at: Date.now() }).where('id', '=', id).execute();
}

export function listUsers(db: Kysely<Database>, limit: number, after?: string): Promise<User[]> {
  let query = db.selectFrom('users').selectAll().orderBy('id').limit(limit);
  if (after) query = query.where('id', '>', after);
  return query.execute();
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

// The account's remaining and used quota are read separately: GET /user/balance names which failed.
// Both add back what text money holds and has not spent (in the same statement: one snapshot), so a
// caller sees what calls cost, not money held for calls in flight.
const quotaOf = preparedQuery((db, held: string, id: string) =>
  db
    .selectFrom('users')
    .select((eb) => eb('balance', '+', pendingSql(eb, 'account', held)).as('balance'))
    .where('id', '=', id),
);
const usedOf = preparedQuery((db, held: string, id: string) =>
  db
    .selectFrom('users')
    .select((eb) => eb('used', '-', pendingSql(eb, 'account', held)).as('used'))
    .where('id', '=', id),
);

export async function readUserQuota(db: Kysely<Database>, id: string): Promise<number | undefined> {
  const row = (await quotaOf(db, id, id))[0];
  return row && Number(row.balance);
}

export async function readUserUsedQuota(db: Kysely<Database>, id: string): Promise<number | undefined> {
  const row = (await usedOf(db, id, id))[0];
  return row && Number(row.used);
}
