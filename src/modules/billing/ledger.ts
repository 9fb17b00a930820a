import type { Insertable, Kysely, Transaction } from 'kysely';
import { compiledStatement } from '../../db/prepared.ts';
import type { Database, LedgerKind, LedgerTable } from '../../db/types.ts';

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

type Deltas = { balance: number; used: number; keyRemain: number; keyUsed: number };

function ledgerRow(kind: LedgerKind, m: Movement, now: number, deltas: Deltas): Insertable<LedgerTable> {
  return {
    user_id: m.userId,
    key_id: m.keyId ?? null,
    kind,
    balance_delta: deltas.balance,
    used_delta: deltas.used,
    key_remain_delta: deltas.keyRemain,
    key_used_delta: deltas.keyUsed,
    ref: m.ref ?? null,
    note: m.note ?? null,
    created_at: now,
  };
}

async function writeRow(db: Executor, kind: LedgerKind, m: Movement, deltas: Deltas): Promise<void> {
  await db.insertInto('ledger').values(ledgerRow(kind, m, Date.now(), deltas)).execute();
}

const takeFromAccount = compiledStatement((db) =>
  db
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '-', 0), used: eb('used', '+', 0), updated_at: 0 }))
    .where('id', '=', '')
    .where('balance', '>=', 0),
);
const giveBackToAccount = compiledStatement((db) =>
  db
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '+', 0), used: eb('used', '-', 0), updated_at: 0 }))
    .where('id', '=', ''),
);
const takeFromLimitedKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '+', 0), quota_remain: eb('quota_remain', '-', 0) }))
    .where('id', '=', '')
    .where('quota_remain', '>=', 0),
);
const countOnKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '+', 0) }))
    .where('id', '=', ''),
);

/**
 * Takes money from each movement's account (and its key's quota when limited), each conditional on
 * its own, and writes the ledger rows of those that could pay in one INSERT. Returns, per movement,
 * undefined when it was paid or the InsufficientFunds that stopped it.
 */
type Row = Insertable<LedgerTable>;

async function debitOne(trx: Transaction<Database>, kind: 'hold' | 'charge', m: Movement, now: number): Promise<InsufficientFunds | Row> {
  assertAmount(m.amount);
  const account = await takeFromAccount(trx, [m.amount, m.amount, now, m.userId, m.amount]);
  if (account.numAffectedRows === 0n) return new InsufficientFunds('account');
  const limited = Boolean(m.keyId && m.keyLimited);
  if (m.keyId) {
    const key = limited ? await takeFromLimitedKey(trx, [m.amount, m.amount, m.keyId, m.amount]) : await countOnKey(trx, [m.amount, m.keyId]);
    if (key.numAffectedRows === 0n) {
      // The key cannot pay: undo this movement's account debit; nothing of it reaches the ledger.
      await giveBackToAccount(trx, [m.amount, m.amount, now, m.userId]);
      return new InsufficientFunds('key');
    }
  }
  return ledgerRow(kind, m, now, { balance: -m.amount, used: m.amount, keyRemain: limited ? -m.amount : 0, keyUsed: m.keyId ? m.amount : 0 });
}

async function refundOne(trx: Transaction<Database>, m: Movement, now: number): Promise<Row | undefined> {
  assertAmount(m.amount);
  if (m.amount === 0) return undefined;
  await giveBackToAccount(trx, [m.amount, m.amount, now, m.userId]);
  const limited = Boolean(m.keyId && m.keyLimited);
  if (m.keyId) {
    if (limited) await returnToLimitedKey(trx, [m.amount, m.amount, m.keyId]);
    else await uncountOnKey(trx, [m.amount, m.keyId]);
  }
  return ledgerRow('refund', m, now, { balance: m.amount, used: -m.amount, keyRemain: limited ? m.amount : 0, keyUsed: m.keyId ? -m.amount : 0 });
}

export type LedgerOp = { op: 'debit'; kind: 'hold' | 'charge'; movement: Movement } | { op: 'refund'; movement: Movement };

const lockOrder = (a: Movement, b: Movement) =>
  a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : (a.keyId ?? '') < (b.keyId ?? '') ? -1 : (a.keyId ?? '') > (b.keyId ?? '') ? 1 : 0;

/**
 * Debits and refunds of many accounts in one transaction, one ledger INSERT for all of them. Rows
 * are locked in one global order (account id, then key id) whatever order the ops came in: two
 * batches that touch the same accounts in opposite orders would otherwise deadlock on Postgres
 * (measured: 80 submits/s with p99 3 s over 50 accounts before this order). Returns, per op, why a
 * debit could not be made.
 */
export async function applyMany(trx: Transaction<Database>, ops: LedgerOp[]): Promise<(InsufficientFunds | undefined)[]> {
  const now = Date.now();
  const outcomes: (InsufficientFunds | undefined)[] = new Array(ops.length).fill(undefined);
  const rows: Row[] = [];
  const order = ops.map((_, i) => i).sort((a, b) => lockOrder(ops[a]!.movement, ops[b]!.movement));
  for (const i of order) {
    const op = ops[i]!;
    const done = op.op === 'debit' ? await debitOne(trx, op.kind, op.movement, now) : await refundOne(trx, op.movement, now);
    if (done instanceof InsufficientFunds) outcomes[i] = done;
    else if (done) rows.push(done);
  }
  for (let i = 0; i < rows.length; i += 500) await trx.insertInto('ledger').values(rows.slice(i, i + 500)).execute();
  return outcomes;
}

/** Takes money from each account (and key quota when limited): per movement, why it could not. */
export function debitMany(trx: Transaction<Database>, kind: 'hold' | 'charge', movements: Movement[]): Promise<(InsufficientFunds | undefined)[]> {
  return applyMany(trx, movements.map((movement) => ({ op: 'debit', kind, movement })));
}

/** Takes money from the account (and the key's quota when limited). Throws InsufficientFunds. */
export async function debit(trx: Transaction<Database>, kind: 'hold' | 'charge', m: Movement): Promise<void> {
  const [failure] = await debitMany(trx, kind, [m]);
  if (failure) throw failure;
}

const returnToLimitedKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '-', 0), quota_remain: eb('quota_remain', '+', 0) }))
    .where('id', '=', ''),
);
const uncountOnKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '-', 0) }))
    .where('id', '=', ''),
);

/** Gives back (parts of) earlier debits: the reverse of `debitMany`, never conditional. */
export async function refundMany(trx: Transaction<Database>, movements: Movement[]): Promise<void> {
  await applyMany(trx, movements.map((movement) => ({ op: 'refund', movement })));
}

/** Gives back (part of) an earlier debit. */
export async function refund(trx: Transaction<Database>, m: Movement): Promise<void> {
  await refundMany(trx, [m]);
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
