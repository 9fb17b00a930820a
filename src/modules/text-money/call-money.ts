import type { Insertable } from 'kysely';
import type { TextHoldsTable, UsageTable } from '../../db/types.ts';
import type { CachedKey } from '../../core/key.ts';
import type { TextUsage } from '../../core/text/provider.ts';
import type { UsageCost } from '../billing/usage-cost.ts';
import type { TextSettle } from './ops.ts';
import type { TextFloat } from './float.ts';

// Money for a synchronous call: hold the prompt plus the requested output before calling (402 if
// the account or key cannot cover it), then settle at the counted tokens and give back the rest.
// The call id (not the request id, which a client may choose) is the ledger `ref` of both rows and
// the key of the call's open hold. Where the process has a float for the key (floats.ts), the
// hold is taken from it in memory and the settlement is a spend of that float.

export type TextOutcome = 'ok' | 'failed' | 'aborted' | 'lost';

/** What a call asks to hold: `amount` is its prompt plus its maximum output at the model's price. */
export interface HoldRequest {
  key: Pick<CachedKey, 'id' | 'user_id' | 'unlimited'>;
  model: string;
  endpoint: 'native' | 'messages' | 'chat-completions' | 'responses';
  requestId: string;
  amount: number;
}

/** A call's open hold, as its `text_holds` row: what the settlement (or the sweeper) gives back from. */
export type HeldCall = Insertable<TextHoldsTable>;

/** A call's money: its own hold, or its part of this process's float (the row is then never written). */
export interface CallMoney {
  hold: HeldCall;
  float?: TextFloat;
}

export function heldCall(request: HoldRequest): HeldCall {
  const { key } = request;
  return {
    // A call taken from a float writes no row of its own: only a call that holds alone needs an id.
    call_id: '',
    user_id: key.user_id,
    key_id: key.id,
    key_limited: key.unlimited !== 1 ? 1 : 0,
    amount: request.amount,
    model: request.model,
    endpoint: request.endpoint,
    request_id: request.requestId,
    created_at: Date.now(),
  };
}

/** A ledger movement of a `text_holds` row (built whole: a spread that adds a key costs ~1 µs on Node 20). */
export const movementOf = (hold: HeldCall, amount: number, note?: string) => ({ userId: hold.user_id, keyId: hold.key_id, keyLimited: hold.key_limited === 1, amount, ref: hold.call_id, note });

/** The cost of a call that is charged nothing. */
export const NO_COST: Readonly<UsageCost> = Object.freeze({ total: 0, input: 0, cache_read: 0, cache_write: 0, output: 0 });

/** A call's usage row (for the console and the per-call charges): each class's tokens and cost. */
export function usageRow(hold: HeldCall, cost: UsageCost, usage: TextUsage, status: TextOutcome): Insertable<UsageTable> {
  return {
    user_id: hold.user_id,
    key_id: hold.key_id,
    model: hold.model,
    endpoint: hold.endpoint,
    request_id: hold.request_id,
    input_tokens: usage.input,
    output_tokens: usage.output,
    cost: cost.total,
    status,
    created_at: Date.now(),
    cache_read_tokens: usage.cache_read,
    cache_write_tokens: usage.cache_write,
    reasoning_tokens: usage.reasoning ?? 0,
    input_cost: cost.input,
    cache_read_cost: cost.cache_read,
    cache_write_cost: cost.cache_write,
    output_cost: cost.output,
  };
}

/**
 * The settlement of a call that held alone: the unused part of its hold back, and its usage row.
 * A call that used more than it held is charged the difference as an overrun, never capped: the
 * upstream bills every token it reported, so the caller pays for them, below zero if need be.
 */
export function settleOp(hold: HeldCall, cost: UsageCost, usage: TextUsage, status: TextOutcome): TextSettle {
  const over = cost.total - hold.amount;
  const movement = over > 0 ? movementOf(hold, over, `text ${status}: used ${cost.total} units, ${over} more than its hold`) : movementOf(hold, -over, `text ${status}`);
  return { kind: 'settle', callId: hold.call_id, movement, overrun: over > 0, usage: usageRow(hold, cost, usage, status) };
}
