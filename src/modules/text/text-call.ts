import type { ApiError } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import type { TextRequest } from '../../core/text/provider.ts';
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
}
