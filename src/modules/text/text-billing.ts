import type { Insertable } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { TextHoldsTable, UsageTable } from '../../db/types.ts';
import { forbidden, paymentRequired } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import { HoldAlreadySettled, type TextSettle, type TextSpend } from './text-money-ops.ts';
import type { TextCall } from './text.service.ts';
import type { TextUsage } from './text.types.ts';
import { TextFloat } from './text-float.ts';
import { promptTokens } from './tokens.ts';

// Money for a synchronous call: hold the prompt plus the requested output before calling (402 if
// the account or key cannot cover it), then settle at the counted tokens and give back the rest.
// The call id (not the request id, which a client may choose) is the ledger `ref` of both rows and
// the key of the call's open hold. Where the process has a float for the key (text-floats.ts), the
// hold is taken from it in memory and the settlement is a spend of that float.

export type TextOutcome = 'ok' | 'failed' | 'aborted' | 'lost';

/** A call's open hold, as its `text_holds` row: what the settlement (or the sweeper) gives back from. */
export type HeldCall = Insertable<TextHoldsTable>;

/** A ledger movement of a `text_holds` row (built whole: a spread that adds a key costs ~1 µs on Node 20). */
export const movementOf = (hold: HeldCall, amount: number, note?: string) => ({ userId: hold.user_id, keyId: hold.key_id, keyLimited: hold.key_limited === 1, amount, ref: hold.call_id, note });

/** A call's usage row (for the console and the per-call charges). */
function usageRow(hold: HeldCall, cost: number, usage: TextUsage, status: TextOutcome): Insertable<UsageTable> {
  return {
    user_id: hold.user_id,
    key_id: hold.key_id,
    model: hold.model,
    endpoint: hold.endpoint,
    request_id: hold.request_id,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cost,
    status,
    created_at: Date.now(),
  };
}

/** The settlement of a call that held alone: the unused part of its hold back, and its usage row. */
export function settleOp(hold: HeldCall, cost: number, usage: TextUsage, status: TextOutcome): TextSettle {
  return { kind: 'settle', callId: hold.call_id, movement: movementOf(hold, hold.amount - cost, `text ${status}`), usage: usageRow(hold, cost, usage, status) };
}

/** A call's money: its own hold, or its part of this process's float (the row is then never written). */
export interface CallMoney {
  hold: HeldCall;
  float?: TextFloat;
}

/** A model without a token price is refused (403) before anything is counted or held. */
export function assertPriced(ctx: AppContext, model: string): void {
  if (!ctx.pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
}

/** A call's money, at once when its hold comes from the key's float (no promise on that path). */
export function holdForCall(ctx: AppContext, call: TextCall): CallMoney | Promise<CallMoney> {
  const { model } = call.request;
  assertPriced(ctx, model);
  const { key } = call;
  const hold: HeldCall = {
    // A call taken from a float writes no row of its own: only a call that holds alone needs an id.
    call_id: '',
    user_id: key.user_id,
    key_id: key.id,
    key_limited: key.unlimited !== 1 ? 1 : 0,
    amount: ctx.pricing.tokenUnits(model, promptTokens(call.request), call.request.maxTokens),
    model,
    endpoint: call.endpoint,
    request_id: call.requestId,
    created_at: Date.now(),
  };
  const float = ctx.textFloats.take(hold);
  if (float instanceof TextFloat) return { hold, float };
  return holdLater(ctx, call, hold, float);
}

async function holdLater(ctx: AppContext, call: TextCall, hold: HeldCall, taking: Promise<TextFloat | undefined> | undefined): Promise<CallMoney> {
  const float = await taking;
  if (float) return { hold, float };
  hold.call_id = newId('txt');
  try {
    await holdAlone(ctx, hold);
  } catch (err) {
    // Money this process's floats hold for the account is money the call may have: give it back, once.
    if (!(err instanceof InsufficientFunds) || !(await ctx.textFloats.release(hold.user_id))) throw asPaymentRequired(err, call);
    await holdAlone(ctx, hold).catch((again) => Promise.reject(asPaymentRequired(again, call)));
  }
  return { hold };
}

const holdAlone = (ctx: AppContext, hold: HeldCall) => ctx.textMoney.add({ kind: 'hold', movement: movementOf(hold, hold.amount), hold });

const asPaymentRequired = (err: unknown, call: TextCall) =>
  err instanceof InsufficientFunds ? paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`) : err;

/**
 * Settles a call once its answer is on its way. The settlement is queued, not waited for: it
 * commits with the next batch (usually the next call's hold) or within a few milliseconds, so a
 * caller does not wait for a second commit. Until it commits the call's whole hold stays taken; if
 * the process dies first, the sweeper gives the hold back in full (as for a call cut off mid-way).
 * A call taken from a float settles as a spend of that float (text-floats.ts).
 */
export function settleCall(ctx: AppContext, call: TextCall, money: CallMoney, usage: TextUsage, status: TextOutcome): void {
  const { hold, float } = money;
  const cost = status === 'failed' ? 0 : Math.min(hold.amount, ctx.pricing.tokenUnits(call.request.model, usage.inputTokens, usage.outputTokens));
  if (float) {
    const spend: TextSpend = { kind: 'spend', callId: float.id, cost, usage: usageRow(hold, cost, usage, status), keyId: hold.key_id };
    ctx.textFloats.spend(float, hold.amount, spend, (err) => logSettleFailure(ctx, hold, float, err));
  } else {
    ctx.textMoney.addSoon(settleOp(hold, cost, usage, status)).catch((err) => logSettleFailure(ctx, hold, undefined, err));
  }
}

function logSettleFailure(ctx: AppContext, hold: HeldCall, float: TextFloat | undefined, err: unknown): void {
  const ids = float ? { floatId: float.id, reqId: hold.request_id } : { callId: hold.call_id, reqId: hold.request_id };
  // Ran past the sweeper's age and was given back in full already: this call stays free.
  if (err instanceof HoldAlreadySettled) {
    ctx.logger.warn(ids, 'text call settled after its hold was swept; not charged');
  } else {
    ctx.logger.error({ err, ...ids }, 'text settlement failed; the sweeper gives the hold back');
  }
}
