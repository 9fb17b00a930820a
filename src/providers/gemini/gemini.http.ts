import type { Readable } from 'node:stream';
import type { Channel } from '../../core/channel.ts';
import { abortAfter } from '../../lib/abort-after.ts';
import { extraHeaders } from '../channel-type.ts';
import { upstreamWhole } from '../upstream-client.ts';
import { ChannelRefused, UpstreamRejected } from '../../core/task-provider.ts';
import type { GeminiError } from './gemini.answers.ts';
import type { GeminiChannelOptions } from './gemini.options.ts';

// One call to the Gemini API (generativelanguage.googleapis.com) as @google/genai makes it: the key in
// `x-goog-api-key`, JSON bodies under /v1beta. Errors are {error: {code, message, status, details}}.
// What another channel might not have (connection errors, timeouts, 429, 5xx) is thrown as a plain
// Error: nothing was made, so the task may go elsewhere. Every other refusal is final for the task.

export interface GeminiCall {
  channel: Channel;
  options: GeminiChannelOptions;
  method: 'GET' | 'POST';
  /** After /v1beta, e.g. `/models/gemini-3-pro-image-preview:generateContent`. */
  path: string;
  body?: unknown;
  /** A body too large to hold as one string (inline reference images), sent as it is produced. */
  bodyStream?: () => Readable;
  timeoutMs: number;
  /** The task's deadline: the call is abandoned when it aborts. */
  signal?: AbortSignal;
}

/** The model's resource path: a mapping may name it with or without the `models/` prefix. */
export const modelPath = (model: string) => `/models/${encodeURIComponent(model.replace(/^models\//, ''))}`;

function refusal(status: number, error: GeminiError | undefined): Error {
  const reason = Array.isArray(error?.details) ? error.details.find((d) => typeof d?.reason === 'string')?.reason : undefined;
  const message = typeof error?.message === 'string' ? error.message : `answered ${status}`;
  // An invalid key is a 400 with reason API_KEY_INVALID; a missing or unauthorised one is 401/403.
  // The message names the channel's problem, never the key.
  if (status === 401 || status === 403 || reason === 'API_KEY_INVALID') {
    return new ChannelRefused('upstream_error', `The Gemini upstream refused the channel's API key (${status}${reason ? ` ${reason}` : ''}): the channel needs attention`);
  }
  return new UpstreamRejected('upstream_error', `The Gemini upstream refused the task (${status}): ${message}`);
}

/** The answer's JSON as it came (the caller names the shape it expects: gemini.answers.ts), or the refusal thrown. */
export async function geminiCall(call: GeminiCall): Promise<unknown> {
  const headers: Record<string, string> = {
    ...extraHeaders(call.options),
    'x-goog-api-key': call.channel.secret ?? '',
    ...(call.body === undefined && !call.bodyStream ? {} : { 'content-type': 'application/json' }),
  };
  const stop = abortAfter(call.timeoutMs + 1000, call.signal);
  const response = await upstreamWhole({
    url: call.channel.base_url ?? '',
    path: `/v1beta${call.path}`,
    method: call.method,
    headers,
    body: call.bodyStream ? call.bodyStream() : call.body === undefined ? undefined : JSON.stringify(call.body),
    timeoutMs: call.timeoutMs,
    signal: stop.signal,
  }).finally(() => stop.done());
  if (response.statusCode === 429 || response.statusCode >= 500) throw new Error(`the Gemini upstream answered ${response.statusCode}`);
  let json: { error?: GeminiError } | null;
  try {
    json = JSON.parse(response.text());
  } catch {
    throw new Error(`the Gemini upstream answered ${response.statusCode} with a body that is not JSON`);
  }
  if (response.statusCode >= 400) throw refusal(response.statusCode, json?.error);
  return json;
}
