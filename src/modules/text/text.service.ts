import type { AppContext } from '../../context.ts';
import { forbidden, notFound, paymentRequired, type ApiError } from '../../http/errors.ts';
import type { CachedKey } from '../../lib/key-cache.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import { upstreamModel } from '../channels/channels.service.ts';
import type { TextChunk, TextProvider, TextRequest, TextResult, TextUsage } from './text.types.ts';
import { TextUpstreamUnavailable } from './text.types.ts';
import { promptTokens, textTokens } from './tokens.ts';
import type { CallSignal } from '../../http/call-signal.ts';

export interface TextCall {
  key: CachedKey;
  endpoint: 'native' | 'messages';
  requestId: string;
  request: TextRequest;
  /** The error for "every upstream is down": 503 on the native endpoint, 502 on messages. */
  allDown: () => ApiError;
}

interface Route {
  provider: TextProvider;
  request: TextRequest;
}

/** The channels that serve the model, best first; a model no channel serves is a 404. */
async function routes(ctx: AppContext, call: TextCall): Promise<Route[]> {
  const out: Route[] = [];
  const { model } = call.request;
  for (const channel of await ctx.channels.candidates(model)) {
    const provider = ctx.textProviderFor(channel);
    if (!provider) continue;
    const upstream = upstreamModel(channel, model);
    out.push({ provider, request: upstream === model ? call.request : { ...call.request, model: upstream } });
  }
  if (out.length === 0) throw notFound(`Model ${call.request.model} is not served here`);
  return out;
}

// Money for a synchronous call: hold the prompt plus the requested output before calling (402 if
// the account or key cannot cover it), then settle at the counted tokens and give back the rest.
async function hold(ctx: AppContext, call: TextCall): Promise<number> {
  const { model } = call.request;
  if (!ctx.pricing.isPerToken(model)) throw forbidden(`Model ${model} has no price set; ask the operator`);
  const units = ctx.pricing.tokenUnits(model, promptTokens(call.request), call.request.maxTokens);
  try {
    await ctx.textMoney.add({ kind: 'hold', movement: { userId: call.key.user_id, keyId: call.key.id, keyLimited: call.key.unlimited !== 1, amount: units, ref: call.requestId } });
  } catch (err) {
    if (err instanceof InsufficientFunds) throw paymentRequired(`Insufficient ${err.payer === 'account' ? 'account balance' : 'key quota'} for the prompt plus ${call.request.maxTokens} output tokens`);
    throw err;
  }
  return units;
}

async function settle(ctx: AppContext, call: TextCall, held: number, usage: TextUsage, status: 'ok' | 'failed' | 'aborted'): Promise<number> {
  const cost = status === 'failed' ? 0 : Math.min(held, ctx.pricing.tokenUnits(call.request.model, usage.inputTokens, usage.outputTokens));
  await ctx.textMoney.add({
    kind: 'settle',
    movement: { userId: call.key.user_id, keyId: call.key.id, keyLimited: call.key.unlimited !== 1, amount: held - cost, ref: call.requestId, note: `text ${status}` },
    usage: {
      user_id: call.key.user_id,
      key_id: call.key.id,
      model: call.request.model,
      endpoint: call.endpoint,
      request_id: call.requestId,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cost,
      status,
      created_at: Date.now(),
    },
  });
  return cost;
}

/** One call, failing over to the next channel when an upstream is unavailable. */
export async function generateText(ctx: AppContext, call: TextCall, signal: CallSignal): Promise<TextResult> {
  const candidates = await routes(ctx, call);
  const held = await hold(ctx, call);
  for (const route of candidates) {
    try {
      const result = await route.provider.generate(route.request, signal);
      await settle(ctx, call, held, result.usage, 'ok');
      return result;
    } catch (err) {
      if (err instanceof TextUpstreamUnavailable) continue;
      await settle(ctx, call, held, { inputTokens: 0, outputTokens: 0 }, 'failed');
      throw err;
    }
  }
  await settle(ctx, call, held, { inputTokens: 0, outputTokens: 0 }, 'failed');
  throw call.allDown();
}

/**
 * A streamed call. Failover happens only before the first chunk; a client that goes away stops
 * the upstream (through `signal`) and is charged for what was produced.
 */
export async function* streamText(ctx: AppContext, call: TextCall, signal: CallSignal): AsyncGenerator<TextChunk> {
  const candidates = await routes(ctx, call);
  const held = await hold(ctx, call);
  let produced = '';
  let usage: TextUsage | undefined;
  let status: 'ok' | 'failed' | 'aborted' = 'failed';
  try {
    for (const route of candidates) {
      const iterator = route.provider.stream(route.request, signal)[Symbol.asyncIterator]();
      let first: IteratorResult<TextChunk>;
      try {
        first = await iterator.next();
      } catch (err) {
        if (err instanceof TextUpstreamUnavailable) continue;
        throw err;
      }
      for (let step = first; !step.done; step = await iterator.next()) {
        const chunk = step.value;
        if (chunk.type === 'delta') produced += chunk.text;
        else usage = chunk.usage;
        yield chunk;
      }
      status = usage ? 'ok' : 'aborted';
      return;
    }
    throw call.allDown();
  } finally {
    if (signal.aborted && status !== 'ok') status = 'aborted';
    const counted = usage ?? { inputTokens: status === 'failed' ? 0 : promptTokens(call.request), outputTokens: textTokens(produced) };
    await settle(ctx, call, held, counted, produced && status === 'failed' ? 'aborted' : status);
  }
}
