import type { Insertable } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { TextHoldsTable } from '../../db/types.ts';
import { forbidden, paymentRequired } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import { HoldAlreadySettled, type TextSettle } from './text-money-ops.ts';
import type { TextCall } from './text.service.ts';
import type { TextUsage } from './text.types.ts';
import { promptTokens } from './tokens.ts';

// Money for a synchronous call: hold the prompt plus the requested output before calling (402 if
// the account or key cannot cover it), then settle at the counted tokens and give back the rest.
// The call id (not the request id, which a client may choose) is the ledger `ref` of both rows and
// the key of the call's open hold.

export type TextOutcome = 'ok' | 'failed' | 'aborted' | 'lost';

/** A call's open hold, as its `text_holds` row: what the settlement (or the sweeper) gives back from. */
export type HeldCall = Insertable<TextHoldsTable>;

const movementOf = (hold: HeldCall, amount: number) => ({ userId: hold.user_id, keyId: hold.key_id, keyLimited: hold.key_limited === 1, amount, ref: hold.call_id });

/** The settlement of one call: the unused part of its hold back, and its usage row. */
export function settleOp(hold: HeldCall, cost: number, usage: TextUsage, status: TextOutcome): TextSettle {
  return {
    kind: 'settle',
    callId: hold.call_id,
    movement: { ...movementOf(hold, hold.amount - cost), note: `text ${status}` },
    usage: {
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
    },
  };
}

export async function holdForCall(ctx: AppContext, call: TextCall): Promise<HeldCall> {
  const { model } = call.request;
  if (!ctx.pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
  const { key } = call;
  const hold: HeldCall = {
    call_id: newId('txt'),
    user_id: key.user_id,
    key_id: key.id,
    key_limited: key.unlimited !== 1 ? 1 : 0,
    amount: ctx.pricing.tokenUnits(model, promptTokens(call.request), call.request.maxTokens),
    model,
    endpoint: call.endpoint,
    request_id: call.requestId,
    created_at: Date.now(),
  };
  try {
    await ctx.textMoney.add({ kind: 'hold', movement: movementOf(hold, hold.amount), hold });
  } catch (err) {
    if (err instanceof InsufficientFunds) throw paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`);
    throw err;
  }
  return hold;
}

/**
 * Settles a call once its answer is on its way. The settlement is queued, not waited for: it
 * commits with the next batch (usually the next call's hold) or within a few milliseconds, so a
 * caller does not wait for a second commit. Until it commits the call's whole hold stays taken; if
 * the process dies first, the sweeper gives the hold back in full (as for a call cut off mid-way).
 */
export function settleCall(ctx: AppContext, call: TextCall, hold: HeldCall, usage: TextUsage, status: TextOutcome): void {
  const cost = status === 'failed' ? 0 : Math.min(hold.amount, ctx.pricing.tokenUnits(call.request.model, usage.inputTokens, usage.outputTokens));
  ctx.textMoney.addSoon(settleOp(hold, cost, usage, status)).catch((err) => {
    // Ran past the sweeper's age and was given back in full already: this call stays free.
    if (err instanceof HoldAlreadySettled) {
      ctx.logger.warn({ callId: hold.call_id, reqId: call.requestId }, 'text call settled after its hold was swept; not charged');
    } else {
      ctx.logger.error({ err, callId: hold.call_id, reqId: call.requestId }, 'text settlement failed; the sweeper gives the hold back');
    }
  });
}
