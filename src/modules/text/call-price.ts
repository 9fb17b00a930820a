import type { AppContext } from '../../context.ts';
import { forbidden, paymentRequired } from '../../core/errors.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import type { CallMoney } from '../text-money/index.ts';
import type { TextCall } from './text-call.ts';
import type { CachedKey } from '../../core/key.ts';
import type { Pricing } from '../billing/pricing.ts';
import type { TextUsage } from '../../core/text/provider.ts';

// What a text call costs, for its money (ctx.textMoney): the hold is the prompt plus the requested
// output at the model's price, the settlement the tokens counted. An account or key that cannot
// cover the hold is a 402 naming which.

/**
 * The prices the key's account pays for `model` (its group's). A model outside the group's list, or
 * without a token price, is refused (403) before anything is counted or held.
 */
export function pricedFor(ctx: AppContext, key: CachedKey, model: string): Pricing {
  const pricing = ctx.groups.pricingFor(key.group, model);
  if (!pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
  return pricing;
}

/**
 * A call's money for a prompt of `promptTokens` (as sizePrompt counted it), at once when its hold
 * comes from money this process holds for the key.
 */
export function holdFor(ctx: AppContext, call: TextCall, promptTokens: number): CallMoney | Promise<CallMoney> {
  const { model, maxTokens } = call.request;
  const amount = pricedFor(ctx, call.key, model).tokenUnits(model, promptTokens, maxTokens);
  // An output ceiling so large that its price is past any integer the ledger keeps (max_tokens 1e15)
  // is more than any account holds.
  if (!Number.isSafeInteger(amount)) throw asPaymentRequired(new InsufficientFunds('account'), call);
  const money = ctx.textMoney.hold({ key: call.key, model, endpoint: call.endpoint, requestId: call.requestId, amount });
  return money instanceof Promise ? money.catch((err) => Promise.reject(asPaymentRequired(err, call))) : money;
}

/** What the call's usage costs, class by class, at its account's group's prices now. */
export const costOf = (ctx: AppContext, call: TextCall, usage: TextUsage) => ctx.groups.forGroup(call.key.group).usageCost(call.request.model, usage);

const asPaymentRequired = (err: unknown, call: TextCall) =>
  err instanceof InsufficientFunds ? paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`) : err;
