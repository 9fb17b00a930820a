import type { LedgerKind } from '../../db/types.ts';
import { assertAmount, ledgerRow, type LedgerRowValues, type Movement } from './ledger-rows.ts';

// The ledger's one semantics. Its three forms apply it: the careful path (ledger-batch.ts), SQLite's
// at-once path (ledger-at-once.ts) and Postgres' statement (ledger-statement.ts, whose SQL is built
// from the rules below); test/ledger-forms.test.ts runs random batches through each and compares.
//
// - A movement is an account's money moving through a key or none: a debit (hold or charge) takes
//   `amount` (a non-negative integer), a refund gives it back. What it takes (`taken`, negative for
//   a refund) comes off the account's balance and onto its `used`; on its key, onto `quota_used`
//   (counted even when the key is unlimited) and, only when the key is limited, off `quota_remain`.
// - Each movement writes one ledger row with exactly those deltas, a debit of 0 too; a refund of 0
//   does nothing at all (no row, no UPDATE, no need for the rows to exist).
// - The payers are the account, and the key when limited. The careful path takes rows in one lock
//   order (account id, then key id) and, per account, makes its refunds first, then its debits one
//   by one in that order: a debit its account or key cannot pay is refused whole (nothing taken, no
//   row). Sums taken in one UPDATE are only a faster way to the same result. Then its overruns: an
//   overrun is a debit of what a call already made used beyond its hold; it is never refused and may
//   take the account and key below zero (the next hold then finds nothing to take).
// - The whole-batch forms change each account and key once by its net and refuse the whole batch
//   when a payer with a debit (not counting overruns) would go below zero before its overruns, or
//   when an account or key row is missing; the caller then takes the careful path. So both agree
//   exactly when the careful path refuses nothing.
// - A missing row on the careful path: a debit is refused (payer 'account' or 'key'); a refund
//   writes its row and changes no balance (the ledger's foreign key refuses a missing account).

export type DebitKind = Extract<LedgerKind, 'hold' | 'charge' | 'overrun'>;
export type MovementKind = DebitKind | Extract<LedgerKind, 'refund'>;
export type LedgerOp = { op: 'debit'; kind: DebitKind; movement: Movement } | { op: 'refund'; movement: Movement };

/** Per kind, the sign of what a movement takes from its payers. */
export const TAKES = { hold: 1, charge: 1, overrun: 1, refund: -1 } as const satisfies Record<MovementKind, 1 | -1>;

export const kindOf = (op: LedgerOp): MovementKind => (op.op === 'debit' ? op.kind : 'refund');
export const taken = (op: LedgerOp): number => TAKES[kindOf(op)] * op.movement.amount;
/** Whether the movement counts against its key's `quota_remain`. */
export const countsAgainstQuota = (m: Movement): boolean => Boolean(m.keyId && m.keyLimited);
/** Whether the movement does anything: everything but a refund of 0. */
export const moves = (op: LedgerOp): boolean => op.op === 'debit' || op.movement.amount > 0;
/** Whether a payer short of money refuses it: every debit but an overrun. */
export const refusable = (op: LedgerOp): boolean => op.op === 'debit' && op.kind !== 'overrun';

// The same rules in SQL, over a row with columns kind, key_id, key_limited (0/1) and amount.
const GIVING_BACK = Object.entries(TAKES)
  .filter(([, sign]) => sign < 0)
  .map(([kind]) => `'${kind}'`)
  .join(', ');
export const TAKEN_SQL = `case when kind in (${GIVING_BACK}) then -amount else amount end`;
export const COUNTS_AGAINST_QUOTA_SQL = `(key_id is not null and key_limited = 1)`;
export const MOVES_SQL = `not (amount = 0 and kind in (${GIVING_BACK}))`;
export const REFUSABLE_SQL = `kind in (${Object.keys(TAKES)
  .filter((kind) => kind !== 'overrun' && kind !== 'refund')
  .map((kind) => `'${kind}'`)
  .join(', ')})`;

/** The movement's ledger row. */
export function rowOf(op: LedgerOp, now: number): LedgerRowValues {
  const m = op.movement;
  const t = taken(op);
  return ledgerRow(kindOf(op), m, now, { balance: -t, used: t, keyRemain: countsAgainstQuota(m) ? -t : 0, keyUsed: m.keyId ? t : 0 });
}

export interface KeyNet {
  /** Added to `quota_used`. */
  used: number;
  /** Taken off `quota_remain`. */
  remain: number;
  /** Of `remain`, what is not an overrun; undefined when no refusable debit counts against the quota. */
  checked?: number;
}

/** A payer's net: what the batch takes in all, and (when it has a refusable debit) what it takes before its overruns, which must leave it at zero or more. */
export interface AccountNet {
  net: number;
  checked?: number;
}

export interface LedgerNets {
  /** Per account, what the batch takes in all (taken off `balance`, added to `used`). */
  accounts: Map<string, AccountNet>;
  keys: Map<string, KeyNet>;
  /** Every row, in the ops' order. */
  rows: LedgerRowValues[];
}

/** What a batch does when every payer can pay it (what the whole-batch forms write). */
export function netsOf(ops: LedgerOp[], now: number): LedgerNets {
  const accounts = new Map<string, AccountNet>();
  const keys = new Map<string, KeyNet>();
  const rows: LedgerRowValues[] = [];
  const checkedOf = new Map<object, number>();
  for (const op of ops) {
    const m = op.movement;
    assertAmount(m.amount);
    if (!moves(op)) continue;
    const t = taken(op);
    const beforeOverruns = op.op === 'debit' && op.kind === 'overrun' ? 0 : t;
    const account = accounts.get(m.userId) ?? { net: 0 };
    account.net += t;
    checkedOf.set(account, (checkedOf.get(account) ?? 0) + beforeOverruns);
    if (refusable(op)) account.checked = 0;
    accounts.set(m.userId, account);
    if (m.keyId) {
      const key = keys.get(m.keyId) ?? { used: 0, remain: 0 };
      key.used += t;
      if (countsAgainstQuota(m)) {
        key.remain += t;
        checkedOf.set(key, (checkedOf.get(key) ?? 0) + beforeOverruns);
        if (refusable(op)) key.checked = 0;
      }
      keys.set(m.keyId, key);
    }
    rows.push(rowOf(op, now));
  }
  for (const payer of [...accounts.values(), ...keys.values()]) if (payer.checked !== undefined) payer.checked = checkedOf.get(payer) ?? 0;
  return { accounts, keys, rows };
}

const lockOrder = (a: Movement, b: Movement) =>
  a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : (a.keyId ?? '') < (b.keyId ?? '') ? -1 : (a.keyId ?? '') > (b.keyId ?? '') ? 1 : 0;

export interface AccountMoves {
  userId: string;
  /** Indices of the account's refunds that move money, in lock order. */
  refunds: number[];
  /** Indices of its debits but overruns, in lock order. */
  debits: number[];
  /** Indices of its overruns, in lock order (made after its debits, never refused). */
  overruns: number[];
}

/** The ops' indices per account, accounts and each account's ops in lock order (the careful path's order). */
export function inLockOrder(ops: LedgerOp[]): AccountMoves[] {
  for (const op of ops) assertAmount(op.movement.amount);
  const order = ops.map((_, i) => i).sort((a, b) => lockOrder(ops[a]!.movement, ops[b]!.movement));
  const accounts: AccountMoves[] = [];
  let current: AccountMoves | undefined;
  for (const i of order) {
    const op = ops[i]!;
    if (current?.userId !== op.movement.userId) accounts.push((current = { userId: op.movement.userId, refunds: [], debits: [], overruns: [] }));
    if (refusable(op)) current.debits.push(i);
    else if (op.op === 'debit') current.overruns.push(i);
    else if (moves(op)) current.refunds.push(i);
  }
  return accounts;
}

export interface KeyShare {
  /** The first movement of the share: its key and whether it counts against the key's quota. */
  movement: Movement;
  amount: number;
  indices: number[];
}

export const sumOf = (ops: LedgerOp[], indices: number[]) => indices.reduce((total, i) => total + ops[i]!.movement.amount, 0);

/** The indices grouped by key (and whether it counts against the quota), in the order they came. */
export function keySharesOf(ops: LedgerOp[], indices: number[]): KeyShare[] {
  const shares = new Map<string, KeyShare>();
  for (const i of indices) {
    const m = ops[i]!.movement;
    const id = `${m.keyId ?? ''}|${countsAgainstQuota(m)}`;
    const share = shares.get(id);
    if (share) {
      share.amount += m.amount;
      share.indices.push(i);
    } else shares.set(id, { movement: m, amount: m.amount, indices: [i] });
  }
  return [...shares.values()];
}
