// How a Responses stream that broke off midway ends for its caller, whether the gateway encoded its
// events (stream-encode.ts) or forwarded an upstream's (providers/wire-forward-broken.ts).
import type { Json } from '../../core/text/index.ts';
import type { StreamError } from '../../core/text/provider.ts';

/**
 * The closing events, before they are numbered: `error`, then `response.failed` with `response`
 * (the Response the caller was told of in response.created) failed; `error` alone when no
 * response.created went out, as the caller knows of no response to fail.
 *
 * Both, as the Responses clients each read one: Codex ends a turn on response.failed (its
 * response.error) and passes over `error`; the openai SDK's stream helper ends on `error`
 * (finalResponse() rejects with it); the AI SDK reports the first of the two as the stream's error
 * and takes its finish from response.failed (in the other order it reported two errors). The
 * `error` event's fields are flat, as the API reference types them: the openai SDK throws on an
 * event holding an `error` object, before it reads response.failed.
 */
export function failureEvents(error: StreamError, response: Json | undefined): Json[] {
  const events: Json[] = [{ type: 'error', code: error.code ?? 'server_error', message: error.message, param: null }];
  // A Response's error.code is one of the API's listed codes (clients check it against them):
  // server_error is the service's own failure; the `error` event keeps the gateway's code.
  if (response) events.push({ type: 'response.failed', response: { ...response, status: 'failed', error: { code: 'server_error', message: error.message } } });
  return events;
}
