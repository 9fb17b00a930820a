import type { ApiError } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import type { Channel } from '../../core/channel.ts';
import type { WireCall } from '../../core/text/index.ts';
import type { TextProvider, TextRequest } from '../../core/text/provider.ts';
import type { Span } from '../../lib/tracing.ts';
import type { CallEntry } from '../calls/call-entry.ts';

/** One text call as the text path carries it: who pays, through which endpoint, asking what. */
export interface TextCall {
  key: CachedKey;
  endpoint: 'native' | 'messages' | 'chat-completions' | 'responses';
  requestId: string;
  request: TextRequest;
  /** The error for "every upstream is down": 503 on the native endpoint, 502 on messages. */
  allDown: () => ApiError;
  /** The request's span while traces are on: an upstream call's span is its child. */
  span?: Span;
  /** The call's line in the call log: the text path tells it the channel, usage, cost and ending. */
  log?: CallEntry;
  /**
   * A channel whose upstream keeps part of the conversation `request` spells out (a Responses
   * follow-up): tried first while it still serves the call, sent `wire` (the call as the caller
   * wrote it) instead; every other channel gets `request`.
   */
  sticky?: { channelId: string; wire: WireCall };
  /** The route that answered, once one did (set by the text service). */
  answeredBy?: Route;
}

/** One channel a call may take, with its provider and the request as that channel gets it. */
export interface Route {
  channel: Channel;
  provider: TextProvider;
  request: TextRequest;
  /** The follow-up sent as the caller wrote it to the channel whose upstream keeps its conversation (text-routes.ts). */
  sticky?: true;
}

/** The channel that answered when its upstream keeps the answer (a follow-up can go back to it), else null. */
export function keptUpstreamBy(call: TextCall): string | null {
  const route = call.answeredBy;
  return route?.provider.keepsConversation?.(route.request) ? route.channel.id : null;
}
