import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, RedeemCode, RedeemCodesTable } from '../../db/types.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export async function insertCodes(db: Executor, rows: Insertable<RedeemCodesTable>[]): Promise<void> {
  await db.insertInto('redeem_codes').values(rows).execute();
}

export function getCode(db: Executor, id: string): Promise<RedeemCode | undefined> {
  return db.selectFrom('redeem_codes').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findCodeByHash(db: Executor, codeHash: string): Promise<RedeemCode | undefined> {
  return db.selectFrom('redeem_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

export function listCodes(db: Executor, options: { batchId?: string; before?: string; limit: number }): Promise<RedeemCode[]> {
  let query = db.selectFrom('redeem_codes').selectAll();
  if (options.batchId !== undefined) query = query.where('batch_id', '=', options.batchId);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query.orderBy('id', 'desc').limit(options.limit).execute();
}

/** Marks the code revoked (the first revocation's time stays); undefined when there is no such code. */
export async function revokeCode(db: Executor, id: string, now: number): Promise<RedeemCode | undefined> {
  await db.updateTable('redeem_codes').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return getCode(db, id);
}

export async function hasRedeemed(db: Executor, codeId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('redemptions').select('code_id').where('code_id', '=', codeId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/**
 * The account's row for the code: false when it has one already. Written first in the redemption's
 * transaction, so a second redemption by the same account waits for the first and then finds its row.
 */
export async function insertRedemption(trx: Transaction<Database>, codeId: string, userId: string, now: number): Promise<boolean> {
  const result = await trx
    .insertInto('redemptions')
    .values({ code_id: codeId, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['code_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Counts one more use, only while the code is live and has a use left: false when it has none. */
export async function takeUse(trx: Transaction<Database>, codeId: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('redeem_codes')
    .set((eb) => ({ used: eb('used', '+', 1) }))
    .where('id', '=', codeId)
    .whereRef('used', '<', 'uses')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
