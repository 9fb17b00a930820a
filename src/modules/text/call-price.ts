import type { AppContext } from '../../context.ts';
import { forbidden, paymentRequired } from '../../core/errors.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import type { CallMoney } from '../text-money/index.ts';
import type { TextCall } from './text-call.ts';
import type { TextUsage } from '../../core/text/provider.ts';
import { promptTokens } from '../../lib/tokens/tokens.ts';

// What a text call costs, for its money (ctx.textMoney): the hold is the prompt plus the requested
// output at the model's price, the settlement the tokens counted. An account or key that cannot
// cover the hold is a 402 naming which.

/** A model without a token price is refused (403) before anything is counted or held. */
export function assertPriced(ctx: AppContext, model: string): void {
  if (!ctx.pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
}

/** A call's money, at once when its hold comes from money this process holds for the key. */
export function holdFor(ctx: AppContext, call: TextCall): CallMoney | Promise<CallMoney> {
  const { model, maxTokens } = call.request;
  assertPriced(ctx, model);
  const amount = ctx.pricing.tokenUnits(model, promptTokens(call.request), maxTokens);
  const money = ctx.textMoney.hold({ key: call.key, model, endpoint: call.endpoint, requestId: call.requestId, amount });
  return money instanceof Promise ? money.catch((err) => Promise.reject(asPaymentRequired(err, call))) : money;
}

/** What the call's usage costs, class by class, at the model's prices now. */
export const costOf = (ctx: AppContext, call: TextCall, usage: TextUsage) => ctx.pricing.usageCost(call.request.model, usage);

const asPaymentRequired = (err: unknown, call: TextCall) =>
  err instanceof InsufficientFunds ? paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`) : err;
