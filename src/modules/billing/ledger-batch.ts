import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import {
  countOnKey,
  giveBackToAccount,
  insertLedgerRows,
  returnToLimitedKey,
  takeFromAccount,
  takeFromAccountAnyway,
  takeFromLimitedKey,
  takeFromLimitedKeyAnyway,
  uncountOnKey,
} from './balance-statements.ts';
import { countsAgainstQuota, inLockOrder, keySharesOf, rowOf, sumOf, type LedgerOp } from './ledger-plan.ts';
import { InsufficientFunds, type LedgerRowValues, type Movement } from './ledger-rows.ts';

// The careful path: many movements in one transaction (group-committed submits, text-call holds and
// settlements), each debit decided on its own as ledger-plan.ts says. Rows are locked in its one
// order, account id then key id, whatever order the movements came in: two batches touching the
// same accounts in opposite orders would otherwise deadlock on Postgres (measured: 80 submits/s with
// p99 3 s over 50 accounts). And one account's debits are taken with one conditional UPDATE for
// their sum, falling back to one each only when the sum cannot be paid: a batch of 50 submits on one
// account costs two UPDATEs, not a hundred.

export type { LedgerOp } from './ledger-plan.ts';
type Outcomes = (InsufficientFunds | undefined)[];

/** One debit on its own: the path when the account or key cannot pay the whole group. */
async function debitOne(trx: Transaction<Database>, op: LedgerOp, now: number): Promise<InsufficientFunds | LedgerRowValues> {
  const m = op.movement;
  const account = await takeFromAccount(trx, [m.amount, m.amount, now, m.userId, m.amount]);
  if (account.numAffectedRows === 0n) return new InsufficientFunds('account');
  if (m.keyId) {
    const key = countsAgainstQuota(m) ? await takeFromLimitedKey(trx, [m.amount, m.amount, m.keyId, m.amount]) : await countOnKey(trx, [m.amount, m.keyId]);
    if (key.numAffectedRows === 0n) {
      // The key cannot pay: undo this movement's account debit; nothing of it reaches the ledger.
      await giveBackToAccount(trx, [m.amount, m.amount, now, m.userId]);
      return new InsufficientFunds('key');
    }
  }
  return rowOf(op, now);
}

async function debitEach(trx: Transaction<Database>, ops: LedgerOp[], indices: number[], now: number, outcomes: Outcomes, rows: LedgerRowValues[]) {
  for (const i of indices) {
    const done = await debitOne(trx, ops[i]!, now);
    if (done instanceof InsufficientFunds) outcomes[i] = done;
    else rows.push(done);
  }
}

async function refundAccount(trx: Transaction<Database>, userId: string, ops: LedgerOp[], indices: number[], now: number, rows: LedgerRowValues[]) {
  const total = sumOf(ops, indices);
  await giveBackToAccount(trx, [total, total, now, userId]);
  for (const { movement: m, amount } of keySharesOf(ops, indices)) {
    if (countsAgainstQuota(m)) await returnToLimitedKey(trx, [amount, amount, m.keyId]);
    else if (m.keyId) await uncountOnKey(trx, [amount, m.keyId]);
  }
  for (const i of indices) rows.push(rowOf(ops[i]!, now));
}

async function debitAccount(trx: Transaction<Database>, userId: string, ops: LedgerOp[], indices: number[], now: number, outcomes: Outcomes, rows: LedgerRowValues[]) {
  const total = sumOf(ops, indices);
  const account = await takeFromAccount(trx, [total, total, now, userId, total]);
  if (account.numAffectedRows === 0n) return debitEach(trx, ops, indices, now, outcomes, rows);
  for (const { movement: m, amount, indices: share } of keySharesOf(ops, indices)) {
    if (m.keyId) {
      const key = countsAgainstQuota(m) ? await takeFromLimitedKey(trx, [amount, amount, m.keyId, amount]) : await countOnKey(trx, [amount, m.keyId]);
      if (key.numAffectedRows === 0n) {
        // This key cannot pay for all of its share: give the share's sum back, then try one by one.
        await giveBackToAccount(trx, [amount, amount, now, userId]);
        await debitEach(trx, ops, share, now, outcomes, rows);
        continue;
      }
    }
    for (const i of share) rows.push(rowOf(ops[i]!, now));
  }
}

/** An account's overruns, after its debits: taken whatever is left, below zero too. */
async function overrunAccount(trx: Transaction<Database>, userId: string, ops: LedgerOp[], indices: number[], now: number, outcomes: Outcomes, rows: LedgerRowValues[]) {
  const total = sumOf(ops, indices);
  const account = await takeFromAccountAnyway(trx, [total, total, now, userId]);
  if (account.numAffectedRows === 0n) {
    for (const i of indices) outcomes[i] = new InsufficientFunds('account');
    return;
  }
  for (const { movement: m, amount, indices: share } of keySharesOf(ops, indices)) {
    if (m.keyId) {
      const key = countsAgainstQuota(m) ? await takeFromLimitedKeyAnyway(trx, [amount, amount, m.keyId]) : await countOnKey(trx, [amount, m.keyId]);
      if (key.numAffectedRows === 0n) {
        // A missing key refuses its share, as for any debit.
        await giveBackToAccount(trx, [amount, amount, now, userId]);
        for (const i of share) outcomes[i] = new InsufficientFunds('key');
        continue;
      }
    }
    for (const i of share) rows.push(rowOf(ops[i]!, now));
  }
}

/** Applies every op and writes their ledger rows in one INSERT; returns, per op, why a debit could not be made. */
export async function applyMany(trx: Transaction<Database>, ops: LedgerOp[]): Promise<Outcomes> {
  const accounts = inLockOrder(ops);
  const now = Date.now();
  const outcomes: Outcomes = new Array(ops.length).fill(undefined);
  const rows: LedgerRowValues[] = [];
  for (const { userId, refunds, debits, overruns } of accounts) {
    // Refunds first: they never fail, and money given back in this batch may pay a hold in it.
    if (refunds.length > 0) await refundAccount(trx, userId, ops, refunds, now, rows);
    if (debits.length > 0) await debitAccount(trx, userId, ops, debits, now, outcomes, rows);
    if (overruns.length > 0) await overrunAccount(trx, userId, ops, overruns, now, outcomes, rows);
  }
  await insertLedgerRows(trx, rows);
  return outcomes;
}

/** Takes money from each account (and key quota when limited): per movement, why it could not. */
export function debitMany(trx: Transaction<Database>, kind: 'hold' | 'charge', movements: Movement[]): Promise<Outcomes> {
  return applyMany(trx, movements.map((movement) => ({ op: 'debit', kind, movement })));
}

/** Gives back (parts of) earlier debits: the reverse of `debitMany`, never conditional. */
export async function refundMany(trx: Transaction<Database>, movements: Movement[]): Promise<void> {
  await applyMany(trx, movements.map((movement) => ({ op: 'refund', movement })));
}
