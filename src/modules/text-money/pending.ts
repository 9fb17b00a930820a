import { expressionBuilder, type Expression, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';

// The read model of text money: what open holds (calls in flight, any process's floats) have taken
// from an account or key and not spent. The balance routes and views add it back to the columns, so
// they show what calls cost, never a float.

/** Taken and not spent by the open holds of one account or key. */
export interface Pending {
  unspent: number;
  /** The part of it taken from a limited key's quota. */
  limited: number;
}

export type PendingOf = { accountIds: readonly string[] } | { keyIds: readonly string[] };

const holds = expressionBuilder<Database, 'text_holds'>();

/**
 * The same amount as a subquery, for a read that must see a balance column and what is pending in
 * one snapshot (a float opening between two reads would be counted twice or not at all). `id` is a
 * value or a column of the outer query; `limitedOnly` counts only what limited keys' quotas gave.
 */
export function pendingSql<TB extends keyof Database>(eb: ExpressionBuilder<Database, TB>, of: 'account' | 'key', id: string | Expression<string>, limitedOnly = false): Expression<number> {
  let held = holds.selectFrom('text_holds').select((h) => h.fn.sum<number>(h('amount', '-', h.ref('spent'))).as('unspent')).where(of === 'account' ? 'user_id' : 'key_id', '=', id);
  if (limitedOnly) held = held.where('key_limited', '=', holds.lit(1));
  return eb.fn.coalesce(held, eb.lit(0));
}

/** Per account or key, what its open holds have not spent; absent when nothing is. */
export async function pendingOf(db: Kysely<Database>, who: PendingOf): Promise<Map<string, Pending>> {
  const [column, ids] = 'keyIds' in who ? (['key_id', who.keyIds] as const) : (['user_id', who.accountIds] as const);
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

/** What a float may take for this key: the account's balance and, when limited, the key's quota. */
const roomById = preparedQuery((db, id: string) =>
  db.selectFrom('api_keys').innerJoin('users', 'users.id', 'api_keys.user_id').select(['users.balance', 'api_keys.unlimited', 'api_keys.quota_remain']).where('api_keys.id', '=', id),
);

export async function roomFor(db: Kysely<Database>, keyId: string): Promise<number> {
  const row = (await roomById(db, keyId))[0];
  if (!row) return 0;
  return row.unlimited === 1 ? Number(row.balance) : Math.min(Number(row.balance), Number(row.quota_remain));
}
