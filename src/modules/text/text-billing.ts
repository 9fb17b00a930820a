import type { AppContext } from '../../context.ts';
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

export interface HeldCall {
  callId: string;
  held: number;
}

export interface SettleInput {
  callId: string;
  userId: string;
  keyId: string;
  keyLimited: boolean;
  held: number;
  cost: number;
  model: string;
  endpoint: string;
  requestId: string;
  usage: TextUsage;
  status: TextOutcome;
}

/** The settlement of one call: the unused part of its hold back, and its usage row. */
export function settleOp(s: SettleInput): TextSettle {
  return {
    kind: 'settle',
    callId: s.callId,
    movement: { userId: s.userId, keyId: s.keyId, keyLimited: s.keyLimited, amount: s.held - s.cost, ref: s.callId, note: `text ${s.status}` },
    usage: {
      user_id: s.userId,
      key_id: s.keyId,
      model: s.model,
      endpoint: s.endpoint,
      request_id: s.requestId,
      input_tokens: s.usage.inputTokens,
      output_tokens: s.usage.outputTokens,
      cost: s.cost,
      status: s.status,
      created_at: Date.now(),
    },
  };
}

export async function holdForCall(ctx: AppContext, call: TextCall): Promise<HeldCall> {
  const { model } = call.request;
  if (!ctx.pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
  const held = ctx.pricing.tokenUnits(model, promptTokens(call.request), call.request.maxTokens);
  const callId = newId('txt');
  const { key } = call;
  const keyLimited = key.unlimited !== 1;
  try {
    await ctx.textMoney.add({
      kind: 'hold',
      movement: { userId: key.user_id, keyId: key.id, keyLimited, amount: held, ref: callId },
      hold: { call_id: callId, user_id: key.user_id, key_id: key.id, key_limited: keyLimited ? 1 : 0, amount: held, model, endpoint: call.endpoint, request_id: call.requestId, created_at: Date.now() },
    });
  } catch (err) {
    if (err instanceof InsufficientFunds) throw paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`);
    throw err;
  }
  return { callId, held };
}

export async function settleCall(ctx: AppContext, call: TextCall, money: HeldCall, usage: TextUsage, status: TextOutcome): Promise<void> {
  const cost = status === 'failed' ? 0 : Math.min(money.held, ctx.pricing.tokenUnits(call.request.model, usage.inputTokens, usage.outputTokens));
  const { key } = call;
  const op = settleOp({ callId: money.callId, userId: key.user_id, keyId: key.id, keyLimited: key.unlimited !== 1, held: money.held, cost, model: call.request.model, endpoint: call.endpoint, requestId: call.requestId, usage, status });
  try {
    await ctx.textMoney.add(op);
  } catch (err) {
    // Ran past the sweeper's age and was given back in full already: this call stays free.
    if (!(err instanceof HoldAlreadySettled)) throw err;
    ctx.logger.warn({ callId: money.callId, reqId: call.requestId }, 'text call settled after its hold was swept; not charged');
  }
}
