import type { AppContext } from '../../context.ts';
import { notFound } from '../../core/errors.ts';
import { ConversationNotKept } from '../../core/text/provider.ts';
import { upstreamModelName, type Channel } from '../../core/channel.ts';
import type { Route, TextCall } from './text-call.ts';
import { throughTextView } from './wire-legacy.ts';

// The channels a text call tries, in routing's order (channel-router.ts: priority, then weight).
// A follow-up whose conversation one channel's upstream keeps (TextCall.sticky) tries that channel
// first, sent the call as the caller wrote it, while the channel still serves the model and its
// upstream still keeps conversations (a channel since disabled, deleted, narrowed or changed to
// another type is passed over); that channel keeps its own place too, with the conversation whole,
// for when its upstream says it no longer keeps the response. The others keep their order and get
// the conversation whole.
// That channel failing before it answers (unreachable, a 5xx) fails over like any other: the next
// channel carries on from the conversation the gateway kept, without what only that upstream held
// (its reasoning items, its prompt cache), rather than the caller getting a 502 for a conversation
// another channel can continue. That answer is then the gateway's alone, and so is its follow-up.
// Its own place is then passed over too (failedChannel): only an upstream that answered that it no
// longer keeps the response is sent the conversation whole; one that is down would fail again.

/** The channels that serve the model, best first; a model no channel serves is a 404. */
export function routes(ctx: AppContext, call: TextCall): Route[] | Promise<Route[]> {
  const channels = ctx.channels.candidates(call.request.model);
  return Array.isArray(channels) ? routesOver(ctx, call, channels) : (channels as Promise<readonly Channel[]>).then((found) => routesOver(ctx, call, found));
}

function routesOver(ctx: AppContext, call: TextCall, channels: readonly Channel[]): Route[] {
  const out: Route[] = [];
  const { model } = call.request;
  const sticky = call.sticky;
  for (const channel of channels) {
    const found = ctx.textProviderFor(channel);
    if (!found) continue;
    const provider = call.request.wire && !found.speaksWire ? throughTextView(found) : found;
    const upstream = upstreamModelName(channel, model);
    const request = upstream === model ? call.request : { ...call.request, model: upstream };
    if (sticky?.channelId === channel.id) {
      // The text view stays the whole conversation: what the upstream bills as input, should the
      // provider have to count it.
      const kept = { ...request, wire: sticky.wire };
      // Tried first as the caller sent it, and again in its own place with the conversation whole,
      // should its upstream no longer keep the response (its refusal then fails over).
      if (provider.keepsConversation?.(kept)) out.unshift({ channel, provider, request: kept, sticky: true });
    }
    out.push({ channel, provider, request });
  }
  if (out.length === 0) throw notFound(`Model ${call.request.model} is not served here`);
  return out;
}

/** The channel not to try again after `route` failed with `err`: the sticky route's, unless its upstream only forgot the response. */
export const failedChannel = (route: Route, err: unknown): string | undefined => (route.sticky && !(err instanceof ConversationNotKept) ? route.channel.id : undefined);
