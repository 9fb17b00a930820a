import type { Kysely, Transaction } from 'kysely';
import type { Database, Topup, TopupStatus } from '../../db/types.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export async function insertTopup(db: Executor, row: Omit<Topup, 'refunded' | 'disputed'>): Promise<void> {
  await db.insertInto('topups').values(row).execute();
}

export function getTopup(db: Executor, id: string): Promise<Topup | undefined> {
  return db.selectFrom('topups').selectAll().where('id', '=', id).executeTakeFirst();
}

export function topupOfPayment(db: Executor, paymentIntent: string): Promise<Topup | undefined> {
  return db.selectFrom('topups').selectAll().where('payment_intent', '=', paymentIntent).executeTakeFirst();
}

export async function setSession(db: Executor, id: string, sessionId: string, now: number): Promise<void> {
  await db.updateTable('topups').set({ session_id: sessionId, updated_at: now }).where('id', '=', id).execute();
}

/** A top-up whose checkout could not be started. */
export async function startFailed(db: Executor, id: string, now: number): Promise<void> {
  await db.updateTable('topups').set({ status: 'failed', updated_at: now }).where('id', '=', id).where('session_id', 'is', null).execute();
}

/**
 * Pending -> paid for this session, keeping its payment. Only one delivery of a completion can move
 * the row: a concurrent one waits for the row, then finds it paid (false), and credits nothing.
 */
export async function markPaid(trx: Transaction<Database>, id: string, sessionId: string, paymentIntent: string | null, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('topups')
    .set({ status: 'paid', payment_intent: paymentIntent, paid_at: now, updated_at: now })
    .where('id', '=', id)
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Pending -> an ending without money (failed, expired); false when the row had moved on. */
export async function markUnpaid(db: Executor, id: string, sessionId: string, status: Extract<TopupStatus, 'failed' | 'expired'>, now: number): Promise<boolean> {
  const result = await db
    .updateTable('topups')
    .set({ status, updated_at: now })
    .where('id', '=', id)
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * What was taken back moves from `seen` to the new totals, only if no other delivery moved either
 * meanwhile (compare-and-set: the caller reads the row again when this is false).
 */
export async function moveTakenBack(
  trx: Transaction<Database>,
  id: string,
  seen: { refunded: number; disputed: number },
  next: { refunded: number; disputed: number; status: TopupStatus },
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('topups')
    .set({ refunded: next.refunded, disputed: next.disputed, status: next.status, updated_at: now })
    .where('id', '=', id)
    .where('refunded', '=', seen.refunded)
    .where('disputed', '=', seen.disputed)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Newest first; `before` is the last id of the previous page (ids sort by creation time). */
export function listTopups(db: Executor, options: { userId?: string; before?: string; limit: number }): Promise<Topup[]> {
  let query = db.selectFrom('topups').selectAll();
  if (options.userId !== undefined) query = query.where('user_id', '=', options.userId);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query.orderBy('id', 'desc').limit(options.limit).execute();
}
