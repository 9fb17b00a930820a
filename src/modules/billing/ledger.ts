import type { Kysely, Transaction } from 'kysely';
import type { Database, LedgerKind } from '../../db/types.ts';

// The only code that changes balances. Each function writes the ledger row in the same transaction
// as the balance columns, and every debit is one conditional UPDATE per row it touches, so parallel
// requests on any number of processes can never spend money that is not there.

type Executor = Kysely<Database> | Transaction<Database>;

export class InsufficientFunds extends Error {
  constructor(readonly payer: 'account' | 'key') {
    super(payer === 'account' ? 'Insufficient account balance' : 'Insufficient key quota');
  }
}

export interface Movement {
  userId: string;
  /** The key the money moves through; its usage is tracked even when it is unlimited. */
  keyId?: string | null;
  /** True when the key has its own quota, which must cover the amount too. */
  keyLimited?: boolean;
  amount: number;
  ref?: string | null;
  note?: string | null;
}

function assertAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error(`ledger amount must be a non-negative integer: ${amount}`);
}

async function writeRow(
  db: Executor,
  kind: LedgerKind,
  m: Movement,
  deltas: { balance: number; used: number; keyRemain: number; keyUsed: number },
): Promise<void> {
  await db
    .insertInto('ledger')
    .values({
      user_id: m.userId,
      key_id: m.keyId ?? null,
      kind,
      balance_delta: deltas.balance,
      used_delta: deltas.used,
      key_remain_delta: deltas.keyRemain,
      key_used_delta: deltas.keyUsed,
      ref: m.ref ?? null,
      note: m.note ?? null,
      created_at: Date.now(),
    })
    .execute();
}

/** Takes money from the account (and the key's quota when limited). Throws InsufficientFunds. */
export async function debit(trx: Transaction<Database>, kind: 'hold' | 'charge', m: Movement): Promise<void> {
  assertAmount(m.amount);
  const now = Date.now();
  const account = await trx
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '-', m.amount), used: eb('used', '+', m.amount), updated_at: now }))
    .where('id', '=', m.userId)
    .where('balance', '>=', m.amount)
    .executeTakeFirst();
  if (account.numUpdatedRows === 0n) throw new InsufficientFunds('account');
  const limited = Boolean(m.keyId && m.keyLimited);
  if (m.keyId) {
    let update = trx
      .updateTable('api_keys')
      .set((eb) => ({
        quota_used: eb('quota_used', '+', m.amount),
        ...(limited ? { quota_remain: eb('quota_remain', '-', m.amount) } : {}),
      }))
      .where('id', '=', m.keyId);
    if (limited) update = update.where('quota_remain', '>=', m.amount);
    const key = await update.executeTakeFirst();
    if (key.numUpdatedRows === 0n) throw new InsufficientFunds('key');
  }
  await writeRow(trx, kind, m, {
    balance: -m.amount,
    used: m.amount,
    keyRemain: limited ? -m.amount : 0,
    keyUsed: m.keyId ? m.amount : 0,
  });
}

/** Gives back (part of) an earlier debit: the reverse of `debit`, never conditional. */
export async function refund(trx: Transaction<Database>, m: Movement): Promise<void> {
  assertAmount(m.amount);
  if (m.amount === 0) return;
  const now = Date.now();
  await trx
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '+', m.amount), used: eb('used', '-', m.amount), updated_at: now }))
    .where('id', '=', m.userId)
    .execute();
  const limited = Boolean(m.keyId && m.keyLimited);
  if (m.keyId) {
    await trx
      .updateTable('api_keys')
      .set((eb) => ({
        quota_used: eb('quota_used', '-', m.amount),
        ...(limited ? { quota_remain: eb('quota_remain', '+', m.amount) } : {}),
      }))
      .where('id', '=', m.keyId)
      .execute();
  }
  await writeRow(trx, 'refund', m, {
    balance: m.amount,
    used: -m.amount,
    keyRemain: limited ? m.amount : 0,
    keyUsed: m.keyId ? -m.amount : 0,
  });
}

/** Adds money to an account (an operator's top-up). */
export async function topUp(trx: Transaction<Database>, m: Movement): Promise<void> {
  assertAmount(m.amount);
  await trx
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '+', m.amount), updated_at: Date.now() }))
    .where('id', '=', m.userId)
    .execute();
  await writeRow(trx, 'topup', m, { balance: m.amount, used: 0, keyRemain: 0, keyUsed: 0 });
}

/** Changes a limited key's remaining quota by a signed amount (never below zero). */
export async function adjustKeyQuota(trx: Transaction<Database>, m: Movement & { delta: number }): Promise<void> {
  if (!Number.isSafeInteger(m.delta)) throw new Error(`quota delta must be an integer: ${m.delta}`);
  const result = await trx
    .updateTable('api_keys')
    .set((eb) => ({ quota_remain: eb('quota_remain', '+', m.delta), updated_at: Date.now() }))
    .where('id', '=', m.keyId!)
    .where('quota_remain', '>=', -m.delta)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new InsufficientFunds('key');
  await writeRow(trx, 'key_quota', m, { balance: 0, used: 0, keyRemain: m.delta, keyUsed: 0 });
}
