import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import type { CachedKey } from '../../core/key.ts';
import type { TextUsage } from '../../core/text/provider.ts';
import type { UsageCost } from '../billing/usage-cost.ts';
import type { CallMoney, HoldRequest, TextOutcome } from './call-money.ts';
import type { Pending, PendingOf } from './pending.ts';
import { TextMoneyBook, type TextMoneyDeps } from './text-money.ts';

// The money of synchronous text calls, behind one door. A call holds before its upstream is asked
// (the prompt plus the most it may produce) and settles after (its cost is charged, the rest given
// back); everyone else only asks what open holds have taken and not spent. How the holds are kept
// (floats per key, group commits, the sweeper of holds whose process died) stays inside this folder;
// docs/architecture.md gives the tour.

export type { CallMoney, HoldRequest, TextOutcome } from './call-money.ts';
export type { Pending, PendingOf } from './pending.ts';
export { pendingSql } from './pending.ts';

export interface TextMoney {
  /**
   * Holds a call's money, or rejects with billing's InsufficientFunds when the account or key cannot
   * cover it. At once (no promise) when the hold comes from money this process already holds for the
   * key, as nearly every call's does: an await would cost each call a turn of the microtask queue.
   */
  hold(call: HoldRequest): CallMoney | Promise<CallMoney>;
  /**
   * Charges what the call cost (nothing when it failed) and gives back the rest of its hold; a cost
   * beyond the hold is charged too, below zero if need be. Written soon, never waited for.
   */
  settle(money: CallMoney, cost: UsageCost, usage: TextUsage, status: TextOutcome): void;
  /** Gives a failed call's whole hold back. */
  release(money: CallMoney): void;
  /** Per account or key, what open holds have taken and not spent; `db` may be a transaction to read in. */
  pendingFor(who: PendingOf, db?: Kysely<Database>): Promise<Map<string, Pending>>;
  /**
   * The operator is setting the key's quota: in `trx`, before the key's row is locked, the open
   * floats of the key (any process's) give back what they have not spent, so the new quota binds
   * the key's next calls (drain.ts).
   */
  drainKey(trx: Transaction<Database>, keyId: string): Promise<void>;
  /** A key changed, here or in another process: this process's floats of it take no more calls. */
  keyChanged(keyId: string): void;
  /** Whether the payer could cover `amount` now (a 402 before a large prompt is counted). */
  couldPay(key: Pick<CachedKey, 'id' | 'user_id'>, amount: number): Promise<boolean>;
  /** Writes this process's queued settlements: a read after it sees the caller's own charges. */
  flush(): Promise<void>;
  /** The background part, in processes that run workers: the sweeper of holds whose process died. */
  start(): void;
  /** At shutdown: the sweeper stopped, every float closed (what its calls spent stays charged), everything queued written. */
  stop(): Promise<void>;
}

export function createTextMoney(deps: TextMoneyDeps): TextMoney {
  return new TextMoneyBook(deps);
}
