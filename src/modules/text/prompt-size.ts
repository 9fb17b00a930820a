import type { AppContext } from '../../context.ts';
import { badRequest, paymentRequired } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import { contextWindow } from '../../core/catalog/models.ts';
import { pricedFor } from './call-price.ts';
import { MAX_TOKEN_BYTES } from '../../lib/tokens/token-count.ts';
import { countOffLoop } from '../../lib/tokens/token-thread.ts';
import { promptTokens, rememberPrompt, uncounted, type Uncounted } from '../../lib/tokens/tokens.ts';
import type { TextRequest } from '../../core/text/provider.ts';

// A prompt is sized before any money moves and before any upstream is asked, and its count kept for
// the hold and the settlement (tokens.ts):
// - What was not counted before is counted on the event loop up to LOOP_UNITS UTF-16 units: at
//   worst ~2.6 µs a unit (random CJK text), ~20 ms; ordinary text ~0.1 ms per KB.
// - A larger prompt is first bounded without counting: it has at least units/128 tokens
//   (token-count.ts). More than the model's context window is a 400 at once; a payer who cannot pay
//   even that many tokens plus the output the call reserves is a 402 at once, so a $0 account never
//   reaches the tokenizer. Then the token thread counts it, stopping once past the window. The hold
//   still decides every other 402, at the exact count.

const LOOP_UNITS = 8 * 1024;

const tooLong = (model: string, window: number, tokens: string) =>
  badRequest(`The prompt has ${tokens} tokens, more than the context window of ${model} (${window} tokens)`);

/** The prompt's tokens (400 past the model's context window; with a payer, 402 when even its least cost cannot be paid). */
export function sizePrompt(ctx: AppContext, request: TextRequest, payer?: CachedKey): number | Promise<number> {
  const window = contextWindow(request.model);
  const left = uncounted(request);
  if (typeof left !== 'number' && left.units > LOOP_UNITS) return sizeOffLoop(ctx, request, left, window, payer);
  const tokens = typeof left === 'number' ? left : promptTokens(request);
  if (tokens > window) throw tooLong(request.model, window, String(tokens));
  return tokens;
}

async function sizeOffLoop(ctx: AppContext, request: TextRequest, left: Uncounted, window: number, payer: CachedKey | undefined): Promise<number> {
  const least = left.known + Math.ceil(left.units / MAX_TOKEN_BYTES);
  if (least > window) throw tooLong(request.model, window, `at least ${least}`);
  if (payer) await refuseUnpayable(ctx, request, payer, least);
  const counts = await countOffLoop(left.texts, window - left.known);
  if (!counts) throw tooLong(request.model, window, `over ${window}`);
  return rememberPrompt(request, left, counts);
}

async function refuseUnpayable(ctx: AppContext, request: TextRequest, payer: CachedKey, least: number): Promise<void> {
  const cost = pricedFor(ctx, payer, request.model).tokenUnits(request.model, least, request.maxTokens);
  if (!(await ctx.textMoney.couldPay(payer, cost))) {
    throw paymentRequired(`Insufficient account balance or key quota for a prompt of at least ${least} tokens plus ${request.maxTokens} output tokens`);
  }
}
