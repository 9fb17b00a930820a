import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

export interface LedgerMismatch {
  table: 'users' | 'api_keys';
  id: string;
  column: string;
  stored: number;
  ledger: number;
}

// Recomputes every balance column from the ledger. An empty result means the books balance.
export async function auditLedger(db: Kysely<Database>): Promise<LedgerMismatch[]> {
  const users = await db
    .selectFrom('users as u')
    .leftJoin(
      db
        .selectFrom('ledger')
        .select(['user_id', sql<number>`sum(balance_delta)`.as('b'), sql<number>`sum(used_delta)`.as('u')])
        .groupBy('user_id')
        .as('l'),
      'l.user_id',
      'u.id',
    )
    .select(['u.id', 'u.balance', 'u.used', 'l.b', 'l.u'])
    .execute();
  const keys = await db
    .selectFrom('api_keys as k')
    .leftJoin(
      db
        .selectFrom('ledger')
        .where('key_id', 'is not', null)
        .select(['key_id', sql<number>`sum(key_remain_delta)`.as('r'), sql<number>`sum(key_used_delta)`.as('u')])
        .groupBy('key_id')
        .as('l'),
      'l.key_id',
      'k.id',
    )
    .select(['k.id', 'k.quota_remain', 'k.quota_used', 'l.r', 'l.u'])
    .execute();
  const out: LedgerMismatch[] = [];
  const check = (table: LedgerMismatch['table'], id: string, column: string, stored: number, sum: unknown) => {
    const ledger = Number(sum ?? 0);
    if (Number(stored) !== ledger) out.push({ table, id, column, stored: Number(stored), ledger });
  };
  for (const u of users) {
    check('users', u.id, 'balance', u.balance, u.b);
    check('users', u.id, 'used', u.used, u.u);
  }
  for (const k of keys) {
    check('api_keys', k.id, 'quota_remain', k.quota_remain, k.r);
    check('api_keys', k.id, 'quota_used', k.quota_used, k.u);
  }
  return out;
}
