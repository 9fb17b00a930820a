import type { AppContext } from '../../context.ts';
import { ApiError, notFound } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import { withoutChannelSecret, type Channel } from '../../core/channel.ts';
import type { CallMoney, TextOutcome } from '../text-money/index.ts';
import { costOf, holdFor } from './call-price.ts';
import type { TextCall } from './text-call.ts';
import { failedChannel, routes } from './text-routes.ts';
import type { TextChunk, TextRequest, TextResult, TextUsage } from '../../core/text/provider.ts';
import { NOTHING_USED, TextUpstreamUnavailable } from '../../core/text/provider.ts';
import { sizePrompt } from './prompt-size.ts';
import { usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import { endUpstreamSpan, upstreamSpan } from './text-spans.ts';
import type { Span } from '../../lib/tracing.ts';
import { noteText } from './text-log.ts';

/**
 * A prompt's tokens for countTokens / count_tokens: the context-window limit first, then the
 * upstream's own count where its protocol has one (the Gemini API), else ours. Nothing is charged.
 */
export async function countPromptTokens(ctx: AppContext, request: TextRequest, key: CachedKey, signal: CallSignal): Promise<number> {
  const candidates = await routes(ctx, { key, endpoint: 'native', requestId: '', request, allDown: () => notFound('') });
  // A model the account's group may not call is not counted either (403), as with the key's own list.
  ctx.groups.pricingFor(key.group, request.model);
  const ours = await sizePrompt(ctx, request);
  for (const route of candidates) {
    if (!route.provider.countTokens) break;
    try {
      return await route.provider.countTokens(route.request, signal);
    } catch (err) {
      if (!(err instanceof TextUpstreamUnavailable)) throw err;
    }
  }
  return ours;
}

/** A refusal as the caller and the call log get it: without the channel's credentials, should the upstream have echoed them. */
function hidingSecret(err: unknown, channel: Channel): unknown {
  if (!(err instanceof ApiError)) return err;
  const message = withoutChannelSecret(channel, err.message);
  return message === err.message ? err : new ApiError(err.status, err.type, message, err.headers);
}

/** One call, failing over to the next channel when an upstream is unavailable. */
export async function generateText(ctx: AppContext, call: TextCall, signal: CallSignal): Promise<TextResult> {
  // The call log's row waits for this part too (one async frame for the whole call: a wrapper around
  // another cost its own turns of the microtask queue).
  call.log?.begin();
  try {
    // All three are nearly always ready at once (cached channels, a prompt counted on the loop, a hold
    // from an in-process float): an await on a value that is not a promise still costs a turn of the
    // microtask queue, so a value is awaited only when it is a promise.
    const routed = routes(ctx, call);
    const candidates = Array.isArray(routed) ? routed : await routed;
    const sized = sizePrompt(ctx, call.request, call.key);
    const held = holdFor(ctx, call, sized instanceof Promise ? await sized : sized);
    const money = held instanceof Promise ? await held : held;
    let failed: string | undefined;
    for (const route of candidates) {
      if (route.channel.id === failed) continue;
      const span = upstreamSpan(call, route.channel, route.request.model);
      try {
        const result = await route.provider.generate(route.request, signal);
        call.answeredBy = route;
        const cost = costOf(ctx, call, result.usage);
        ctx.textMoney.settle(money, cost, result.usage, 'ok');
        noteText(call, route.channel, 'ok', result.usage, cost);
        endUpstreamSpan(span, result.usage);
        return result;
      } catch (thrown) {
        endUpstreamSpan(span, undefined, thrown);
        if (thrown instanceof TextUpstreamUnavailable) {
          failed = failedChannel(route, thrown) ?? failed;
          continue;
        }
        const err = hidingSecret(thrown, route.channel);
        if (signal.aborted) {
          // The caller left while the upstream worked on a prompt it had received: the prompt is paid
          // (our count: the upstream's own never came), and the upstream call was stopped.
          const counted = usageOf(undefined, call.request, '');
          const cost = costOf(ctx, call, counted);
          ctx.textMoney.settle(money, cost, counted, 'aborted');
          noteText(call, route.channel, 'aborted', counted, cost, err);
        } else {
          ctx.textMoney.release(money);
          noteText(call, route.channel, 'failed', undefined, undefined, err);
        }
        throw err;
      }
    }
    ctx.textMoney.release(money);
    throw call.allDown();
  } finally {
    call.log?.end();
  }
}

/** How a stream went, for its settlement. */
interface StreamState {
  started: boolean;
  status: Exclude<TextOutcome, 'lost'>;
  /** The upstream's final usage (its end chunk). */
  usage?: TextUsage;
  /** What the upstream reported before its end (message_start's prompt): paid if the stream breaks off. */
  reported?: ReportedUsage;
  /** Text deltas produced; forwarded events are read for their text only if the call ends without usage. */
  produced: string;
  forwarded?: { text(): string };
  span?: Span;
  failure?: unknown;
}

/**
 * A streamed call. Failover happens only before the first chunk; a client that goes away stops
 * the upstream (through `signal`) and is charged for what was produced. One generator for the
 * whole call, the call log's bracket included: each generator in the chain costs every chunk its
 * own promises and turns of the microtask queue.
 */
export async function* streamText(ctx: AppContext, call: TextCall, signal: CallSignal): AsyncGenerator<TextChunk> {
  call.log?.begin();
  try {
    const candidates = await routes(ctx, call);
    const money = await holdFor(ctx, call, await sizePrompt(ctx, call.request, call.key));
    const state: StreamState = { started: false, status: 'failed', produced: '' };
    try {
      let failed: string | undefined;
      for (const route of candidates) {
        if (route.channel.id === failed) continue;
        state.span = upstreamSpan(call, route.channel, route.request.model);
        const iterator = route.provider.stream(route.request, signal)[Symbol.asyncIterator]();
        let first: IteratorResult<TextChunk>;
        try {
          first = await iterator.next();
        } catch (err) {
          endUpstreamSpan(state.span, undefined, err);
          state.span = undefined;
          if (err instanceof TextUpstreamUnavailable) {
            failed = failedChannel(route, err) ?? failed;
            continue;
          }
          throw hidingSecret(err, route.channel);
        }
        // The upstream answered: it has the prompt, and from here a cut still pays for it.
        state.started = true;
        call.answeredBy = route;
        call.log?.firstToken();
        for (let step = first; !step.done; step = await iterator.next()) {
          const chunk = step.value;
          if (chunk.type === 'delta') state.produced += chunk.text;
          else if (chunk.type === 'events') state.forwarded = chunk;
          else if (chunk.type === 'usage') {
            state.reported = chunk.usage;
            continue;
          } else if (chunk.type === 'end') state.usage = chunk.usage;
          yield chunk;
        }
        state.status = state.usage ? 'ok' : 'aborted';
        return;
      }
      throw call.allDown();
    } catch (thrown) {
      // An upstream that failed midway (its error event) may have echoed the channel's credentials
      // in its message: neither the call log nor the route's log of the stream's end gets them.
      const err = call.answeredBy ? hidingSecret(thrown, call.answeredBy.channel) : thrown;
      state.failure = err;
      throw err;
    } finally {
      settleStream(ctx, call, signal, money, state);
    }
  } finally {
    call.log?.end();
  }
}

function settleStream(ctx: AppContext, call: TextCall, signal: CallSignal, money: CallMoney, state: StreamState): void {
  let status = state.status;
  if (signal.aborted && status !== 'ok') status = 'aborted';
  if ((state.started || signal.aborted) && status === 'failed') status = 'aborted';
  const produced = !state.usage && state.forwarded ? state.produced + state.forwarded.text() : state.produced;
  // Without the upstream's final usage: what it reported so far, else our count of the prompt it
  // received and of what it produced. A call no upstream answered pays nothing.
  const counted = state.usage ?? (state.started || signal.aborted ? usageOf(state.reported, call.request, produced) : NOTHING_USED);
  if (status === 'failed') {
    ctx.textMoney.release(money);
    noteText(call, undefined, status, undefined, undefined, state.failure);
  } else {
    const cost = costOf(ctx, call, counted);
    ctx.textMoney.settle(money, cost, counted, status);
    // Billed as cut either way; the log says who cut it: the caller (aborted) or the upstream (failed).
    noteText(call, call.answeredBy?.channel, status === 'aborted' && !signal.aborted ? 'failed' : status, counted, cost, state.failure);
  }
  endUpstreamSpan(state.span, state.started ? counted : undefined, status === 'ok' ? undefined : new Error(status));
}
