import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import { countOnKey, giveBackToAccount, insertLedgerRows, returnToLimitedKey, takeFromAccount, takeFromLimitedKey, uncountOnKey } from './balance-statements.ts';
import { assertAmount, debitRow, InsufficientFunds, refundRow, type LedgerRowValues, type Movement } from './ledger-rows.ts';

// Many movements in one transaction (group-committed submits, text-call holds and settlements).
// Rows are locked in one global order, account id then key id, whatever order the movements came
// in: two batches touching the same accounts in opposite orders would otherwise deadlock on Postgres
// (measured: 80 submits/s with p99 3 s over 50 accounts). And one account's debits are taken with
// one conditional UPDATE for their sum, falling back to one each only when the sum cannot be paid:
// a batch of 50 submits on one account costs two UPDATEs, not a hundred.

export type LedgerOp = { op: 'debit'; kind: 'hold' | 'charge'; movement: Movement } | { op: 'refund'; movement: Movement };
type Outcomes = (InsufficientFunds | undefined)[];

const lockOrder = (a: Movement, b: Movement) =>
  a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : (a.keyId ?? '') < (b.keyId ?? '') ? -1 : (a.keyId ?? '') > (b.keyId ?? '') ? 1 : 0;

const sum = (ops: LedgerOp[], indices: number[]) => indices.reduce((total, i) => total + ops[i]!.movement.amount, 0);

/** Indices grouped by key (and whether it is limited), in the order they came. */
function byKey(ops: LedgerOp[], indices: number[]): [Movement, number[]][] {
  const groups = new Map<string, [Movement, number[]]>();
  for (const i of indices) {
    const m = ops[i]!.movement;
    const id = `${m.keyId ?? ''}|${Boolean(m.keyId && m.keyLimited)}`;
    const group = groups.get(id);
    if (group) group[1].push(i);
    else groups.set(id, [m, [i]]);
  }
  return [...groups.values()];
}

/** One debit on its own: the path when the account or key cannot pay the whole group. */
async function debitOne(trx: Transaction<Database>, kind: 'hold' | 'charge', m: Movement, now: number): Promise<InsufficientFunds | LedgerRowValues> {
  const account = await takeFromAccount(trx, [m.amount, m.amount, now, m.userId, m.amount]);
  if (account.numAffectedRows === 0n) return new InsufficientFunds('account');
  if (m.keyId) {
    const key = m.keyLimited ? await takeFromLimitedKey(trx, [m.amount, m.amount, m.keyId, m.amount]) : await countOnKey(trx, [m.amount, m.keyId]);
    if (key.numAffectedRows === 0n) {
      // The key cannot pay: undo this movement's account debit; nothing of it reaches the ledger.
      await giveBackToAccount(trx, [m.amount, m.amount, now, m.userId]);
      return new InsufficientFunds('key');
    }
  }
  return debitRow(kind, m, now);
}

async function debitEach(trx: Transaction<Database>, ops: LedgerOp[], indices: number[], now: number, outcomes: Outcomes, rows: LedgerRowValues[]) {
  for (const i of indices) {
    const op = ops[i] as Extract<LedgerOp, { op: 'debit' }>;
    const done = await debitOne(trx, op.kind, op.movement, now);
    if (done instanceof InsufficientFunds) outcomes[i] = done;
    else rows.push(done);
  }
}

async function refundAccount(trx: Transaction<Database>, userId: string, ops: LedgerOp[], indices: number[], now: number, rows: LedgerRowValues[]) {
  const total = sum(ops, indices);
  await giveBackToAccount(trx, [total, total, now, userId]);
  for (const [m, group] of byKey(ops, indices)) {
    const amount = sum(ops, group);
    if (m.keyId && m.keyLimited) await returnToLimitedKey(trx, [amount, amount, m.keyId]);
    else if (m.keyId) await uncountOnKey(trx, [amount, m.keyId]);
  }
  for (const i of indices) rows.push(refundRow(ops[i]!.movement, now));
}

async function debitAccount(trx: Transaction<Database>, userId: string, ops: LedgerOp[], indices: number[], now: number, outcomes: Outcomes, rows: LedgerRowValues[]) {
  const total = sum(ops, indices);
  const account = await takeFromAccount(trx, [total, total, now, userId, total]);
  if (account.numAffectedRows === 0n) return debitEach(trx, ops, indices, now, outcomes, rows);
  for (const [m, group] of byKey(ops, indices)) {
    const amount = sum(ops, group);
    if (m.keyId) {
      const key = m.keyLimited ? await takeFromLimitedKey(trx, [amount, amount, m.keyId, amount]) : await countOnKey(trx, [amount, m.keyId]);
      if (key.numAffectedRows === 0n) {
        // This key cannot pay for all of its group: give the group's sum back, then try one by one.
        await giveBackToAccount(trx, [amount, amount, now, userId]);
        await debitEach(trx, ops, group, now, outcomes, rows);
        continue;
      }
    }
    for (const i of group) rows.push(debitRow((ops[i] as Extract<LedgerOp, { op: 'debit' }>).kind, ops[i]!.movement, now));
  }
}

/** Applies every op and writes their ledger rows in one INSERT; returns, per op, why a debit could not be made. */
export async function applyMany(trx: Transaction<Database>, ops: LedgerOp[]): Promise<Outcomes> {
  for (const op of ops) assertAmount(op.movement.amount);
  const now = Date.now();
  const outcomes: Outcomes = new Array(ops.length).fill(undefined);
  const rows: LedgerRowValues[] = [];
  const order = ops.map((_, i) => i).sort((a, b) => lockOrder(ops[a]!.movement, ops[b]!.movement));
  for (let start = 0; start < order.length; ) {
    const userId = ops[order[start]!]!.movement.userId;
    let end = start;
    while (end < order.length && ops[order[end]!]!.movement.userId === userId) end++;
    const account = order.slice(start, end);
    // Refunds first: they never fail, and money given back in this batch may pay a hold in it.
    const refunds = account.filter((i) => ops[i]!.op === 'refund' && ops[i]!.movement.amount > 0);
    const debits = account.filter((i) => ops[i]!.op === 'debit');
    if (refunds.length > 0) await refundAccount(trx, userId, ops, refunds, now, rows);
    if (debits.length > 0) await debitAccount(trx, userId, ops, debits, now, outcomes, rows);
    start = end;
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
