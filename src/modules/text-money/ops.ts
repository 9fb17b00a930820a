import type { Insertable } from 'kysely';
import type { TextHoldsTable, UsageTable } from '../../db/types.ts';
import type { LedgerOp } from '../billing/ledger-batch.ts';
import type { Movement } from '../billing/ledger-rows.ts';

// What the text-money writers (careful.ts, whole.ts) share: the kinds of op and the
// rows they write besides the ledger's. A call's own hold is a hold and a settle; a call taken from
// a process's float (floats.ts) is a spend, and the float itself a hold, releases and a close.

export type TextHold = { kind: 'hold'; movement: Movement; hold: Insertable<TextHoldsTable> };
/** `overrun`: the call used more than its hold, and `movement` charges the rest (else it gives back what was not used). */
export type TextSettle = { kind: 'settle'; movement: Movement; usage: Insertable<UsageTable>; callId: string; overrun?: boolean };
/** A call settled from a float: its cost is added to the float's `spent`; no ledger row until the float closes. */
export type TextSpend = { kind: 'spend'; callId: string; cost: number; usage: Insertable<UsageTable>; keyId: string };
/** Gives back `movement.amount` of a float's unspent money now; the float stays open, smaller. */
export type TextRelease = { kind: 'release'; callId: string; movement: Movement };
/** Closes a float: deletes its row and gives back what it did not spend (an amount only the row knows), or charges what its calls spent beyond it (`overrun`). */
export type TextClose = { kind: 'close'; callId: string; movement: Movement; overrun?: boolean };
export type TextFloatOp = TextSpend | TextRelease | TextClose;
export type TextMoneyOp = TextHold | TextSettle | TextFloatOp;

/** The op as written: a close learns from the row how much it gives back. */
export const withRefund = (op: TextClose, unspent: number): TextClose =>
  unspent >= 0 ? { ...op, movement: { ...op.movement, amount: unspent } } : { ...op, overrun: true, movement: { ...op.movement, amount: -unspent, note: `${op.movement.note ?? 'text float closed'}: its calls used ${-unspent} more than it held` } };

/** A settlement that came after its hold had already been settled (and refunded) by the sweeper. */
export class HoldAlreadySettled extends Error {
  constructor(readonly callId: string) {
    super(`text call ${callId}: its hold was already settled`);
  }
}

export const settlesOf = (ops: TextMoneyOp[]) => ops.filter((op): op is TextSettle => op.kind === 'settle');
export const usageOf = (ops: TextMoneyOp[]) => ops.flatMap((op) => (op.kind === 'settle' || op.kind === 'spend' ? [op.usage] : []));
export const isFloatOp = (op: TextMoneyOp): op is TextFloatOp => op.kind === 'spend' || op.kind === 'release' || op.kind === 'close';
export const keyIdOf = (op: TextMoneyOp) => (op.kind === 'spend' ? op.keyId : op.movement.keyId);
export const holdsOf = (ops: TextMoneyOp[]) => ops.filter((op): op is TextHold => op.kind === 'hold');

/** The ledger movement of an op that went through (a spend has none: its float's hold already took the money). */
export const asLedgerOp = (op: TextMoneyOp): LedgerOp[] =>
  op.kind === 'hold'
    ? [{ op: 'debit', kind: 'hold', movement: op.movement }]
    : op.kind === 'spend'
      ? []
      : op.kind !== 'release' && op.overrun
        ? [{ op: 'debit', kind: 'overrun', movement: op.movement }]
        : [{ op: 'refund', movement: op.movement }];

/**
 * Settlements of a call that an earlier op in the same batch already settles (the sweeper and the
 * call itself can meet in one batch): only the first may take the hold.
 */
export function repeatedSettles(ops: TextMoneyOp[]): Set<TextMoneyOp> {
  const seen = new Set<string>();
  const repeated = new Set<TextMoneyOp>();
  for (const op of ops) {
    if (op.kind !== 'settle') continue;
    if (seen.has(op.callId)) repeated.add(op);
    seen.add(op.callId);
  }
  return repeated;
}
