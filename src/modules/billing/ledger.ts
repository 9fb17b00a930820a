import type { Kysely, Transaction } from 'kysely';
import type { Database, LedgerKind } from '../../db/types.ts';
import { debitMany, refundMany } from './ledger-batch.ts';
import { MAX_BALANCE_UNITS } from '../../lib/money.ts';
import { AboveMaximum, assertAmount, InsufficientFunds, ledgerRow, type Deltas, type Movement } from './ledger-rows.ts';

// The only code that changes balances. Each function writes the ledger row in the same transaction
// as the balance columns, and every debit is a conditional UPDATE of the rows it touches, so parallel
// requests on any number of processes can never spend money that is not there.

export { applyMany, debitMany, refundMany, type LedgerOp } from './ledger-batch.ts';
export { AboveMaximum, InsufficientFunds, type Movement } from './ledger-rows.ts';

type Executor = Kysely<Database> | Transaction<Database>;

async function writeRow(db: Executor, kind: LedgerKind, m: Movement, deltas: Deltas): Promise<void> {
  await db.insertInto('ledger').values(ledgerRow(kind, m, Date.now(), deltas)).execute();
}

/** Takes money from the account (and the key's quota when limited). Throws InsufficientFunds. */
export async function debit(trx: Transaction<Database>, kind: 'hold' | 'charge', m: Movement): Promise<void> {
  const [failure] = await debitMany(trx, kind, [m]);
  if (failure) throw failure;
}

/** Gives back (part of) an earlier debit. */
export async function refund(trx: Transaction<Database>, m: Movement): Promise<void> {
  await refundMany(trx, [m]);
}

/**
 * Adds money to an account (a top-up, a code, a sign-up credit). Throws AboveMaximum, having changed
 * nothing, when the balance would go above MAX_BALANCE_UNITS: the UPDATE's own condition decides, so
 * parallel credits cannot pass it together. The caller has made sure the account exists.
 */
export async function topUp(trx: Transaction<Database>, m: Movement): Promise<void> {
  assertAmount(m.amount);
  const result = await trx
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '+', m.amount), updated_at: Date.now() }))
    .where('id', '=', m.userId)
    .where('balance', '<=', MAX_BALANCE_UNITS - m.amount)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new AboveMaximum('account');
  await writeRow(trx, 'topup', m, { balance: m.amount, used: 0, keyRemain: 0, keyUsed: 0 });
}

/**
 * Takes back money an account was given (a paid top-up refunded, or lost in a dispute), whatever is
 * left: the balance may go below zero, and the account's paid calls are then refused (402) by the
 * conditional debits until it is paid up. Not usage: `used` stays.
 */
export async function takeBack(trx: Transaction<Database>, m: Movement): Promise<void> {
  assertAmount(m.amount);
  await trx
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '-', m.amount), updated_at: Date.now() }))
    .where('id', '=', m.userId)
    .execute();
  await writeRow(trx, 'reversal', m, { balance: -m.amount, used: 0, keyRemain: 0, keyUsed: 0 });
}

/** Changes a limited key's remaining quota by a signed amount (never below zero, never above MAX_BALANCE_UNITS). */
export async function adjustKeyQuota(trx: Transaction<Database>, m: Movement & { delta: number }): Promise<void> {
  if (!Number.isSafeInteger(m.delta)) throw new Error(`quota delta must be an integer: ${m.delta}`);
  const result = await trx
    .updateTable('api_keys')
    .set((eb) => ({ quota_remain: eb('quota_remain', '+', m.delta), updated_at: Date.now() }))
    .where('id', '=', m.keyId!)
    .where('quota_remain', '>=', -m.delta)
    .$if(m.delta > 0, (qb) => qb.where('quota_remain', '<=', MAX_BALANCE_UNITS - m.delta))
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw m.delta > 0 ? new AboveMaximum('key') : new InsufficientFunds('key');
  await writeRow(trx, 'key_quota', m, { balance: 0, used: 0, keyRemain: m.delta, keyUsed: 0 });
}
