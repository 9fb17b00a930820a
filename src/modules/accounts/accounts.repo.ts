import type { Expression, ExpressionBuilder, Kysely } from 'kysely';
import type { Database, User } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';

export async function insertUser(db: Kysely<Database>, user: { id: string; name: string; now: number }): Promise<void> {
  await db
    .insertInto('users')
    .values({ id: user.id, name: user.name, status: 'active', balance: 0, used: 0, created_at: user.now, updated_at: user.now })
    .execute();
}

export function getUser(db: Kysely<Database>, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
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

/**
 * What open text holds of an account or key (by `column`) have taken and not spent, 0 when none;
 * `limitedOnly` counts only holds on a limited key (the ones that took from its quota).
 */
export function unspentHeld(outer: ExpressionBuilder<Database, 'users'> | ExpressionBuilder<Database, 'api_keys'>, column: 'user_id' | 'key_id', id: string, limitedOnly = false): Expression<number> {
  // Only text_holds is referenced: the outer table does not matter to the subquery.
  const eb = outer as unknown as ExpressionBuilder<Database, 'text_holds'>;
  let held = eb.selectFrom('text_holds').select((h) => h.fn.sum<number>(h('amount', '-', h.ref('spent'))).as('unspent')).where(column, '=', id);
  if (limitedOnly) held = held.where('key_limited', '=', eb.lit(1));
  return eb.fn.coalesce(held, eb.lit(0));
}

export interface OpenHolds {
  /** Taken and not spent, by every open hold. */
  unspent: number;
  /** The part of it taken from a limited key's quota. */
  limited: number;
}
export const NO_OPEN_HOLDS: OpenHolds = { unspent: 0, limited: 0 };

/** What open text holds have taken and not spent, per account or key (by `column`); absent when none. */
export async function openHoldsOf(db: Kysely<Database>, column: 'user_id' | 'key_id', ids: string[]): Promise<Map<string, OpenHolds>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('text_holds')
    .select((eb) => {
      const unspent = eb('amount', '-', eb.ref('spent'));
      return [column, eb.fn.sum<number>(unspent).as('unspent'), eb.fn.sum<number>(eb.case().when('key_limited', '=', 1).then(unspent).else(0).end()).as('limited')];
    })
    .where(column, 'in', ids)
    .groupBy(column)
    .execute();
  return new Map(rows.map((row) => [row[column] as string, { unspent: Number(row.unspent), limited: Number(row.limited) }]));
}

// The account's remaining and used quota are read separately, as SPEC 4.2 distinguishes their failures.
// Both leave out what open text holds have taken and not spent (text/text-floats.ts): a caller
// sees what calls cost, not a process's float.
const quotaOf = preparedQuery((db, held: string, id: string) =>
  db
    .selectFrom('users')
    .select((eb) => eb('balance', '+', unspentHeld(eb, 'user_id', held)).as('balance'))
    .where('id', '=', id),
);
const usedOf = preparedQuery((db, held: string, id: string) =>
  db
    .selectFrom('users')
    .select((eb) => eb('used', '-', unspentHeld(eb, 'user_id', held)).as('used'))
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
