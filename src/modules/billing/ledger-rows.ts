import type { Insertable } from 'kysely';
import type { LedgerKind, LedgerTable } from '../../db/types.ts';

export class InsufficientFunds extends Error {
  constructor(readonly payer: 'account' | 'key') {
    super(payer === 'account' ? 'Insufficient account balance' : 'Insufficient key quota');
  }
}

/** A credit refused because it would take a balance or quota above MAX_BALANCE_UNITS (lib/money.ts). */
export class AboveMaximum extends Error {
  constructor(readonly payer: 'account' | 'key') {
    super(payer === 'account' ? 'The balance would go above its maximum' : 'The quota would go above its maximum');
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

export function assertAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error(`ledger amount must be a non-negative integer: ${amount}`);
}

export type Deltas = { balance: number; used: number; keyRemain: number; keyUsed: number };
export type LedgerRowValues = Insertable<LedgerTable>;

export function ledgerRow(kind: LedgerKind, m: Movement, now: number, deltas: Deltas): LedgerRowValues {
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
