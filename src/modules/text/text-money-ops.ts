import type { Insertable } from 'kysely';
import type { TextHoldsTable, UsageTable } from '../../db/types.ts';
import type { LedgerOp } from '../billing/ledger-batch.ts';
import type { Movement } from '../billing/ledger-rows.ts';

// What the text-money writers (text-money.ts, text-money-whole.ts) share: the two kinds of op and
// the rows they write besides the ledger's.

export type TextHold = { kind: 'hold'; movement: Movement; hold: Insertable<TextHoldsTable> };
export type TextSettle = { kind: 'settle'; movement: Movement; usage: Insertable<UsageTable>; callId: string };
export type TextMoneyOp = TextHold | TextSettle;

/** A settlement that came after its hold had already been settled (and refunded) by the sweeper. */
export class HoldAlreadySettled extends Error {
  constructor(readonly callId: string) {
    super(`text call ${callId}: its hold was already settled`);
  }
}

export const USAGE_COLUMNS = ['user_id', 'key_id', 'model', 'endpoint', 'request_id', 'input_tokens', 'output_tokens', 'cost', 'status', 'created_at'] as const;
export const HOLD_COLUMNS = ['call_id', 'user_id', 'key_id', 'key_limited', 'amount', 'model', 'endpoint', 'request_id', 'created_at'] as const;

export const settlesOf = (ops: TextMoneyOp[]) => ops.filter((op): op is TextSettle => op.kind === 'settle');
export const holdsOf = (ops: TextMoneyOp[]) => ops.filter((op): op is TextHold => op.kind === 'hold');

export const asLedgerOp = (op: TextMoneyOp): LedgerOp => (op.kind === 'hold' ? { op: 'debit', kind: 'hold', movement: op.movement } : { op: 'refund', movement: op.movement });

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
