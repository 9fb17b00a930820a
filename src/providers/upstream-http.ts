import { StringDecoder } from 'node:string_decoder';
import { Pool } from 'undici';
import type { Channel } from '../core/channel.ts';
import { TextUpstreamUnavailable, type TextChunk, type TextProvider, type TextRequest, type TextResult } from '../core/text/provider.ts';
import type { CallSignal } from '../lib/call-signal.ts';
import { requestStreamed, type StreamedResponse } from './upstream-stream.ts';
import { maxAnswerBytes, UpstreamAnswerCut } from './upstream-read.ts';
import { requestWhole, type WholeResponse } from './upstream-whole.ts';

// One keep-alive undici pool per upstream origin (undici is several times faster here than the
// global fetch): streams and whole answers each go through a small dispatch handler on the pool
// (upstream-stream.ts, upstream-whole.ts). Failures that another channel might not have become
// TextUpstreamUnavailable (connection errors, timeouts, 429, 5xx); other answers are returned.

const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
    pools.set(origin, pool);
  }
  return pool;
}

export interface UpstreamCall {
  origin: string;
  path: string;
  /** Every request header, `content-type` included. */
  headers: Record<string, string>;
  /** JSON to serialise, or the bytes of JSON text as they are to go (a caller's own body). */
  body: unknown;
  timeoutMs: number;
  signal: CallSignal;
}

/** A failure another channel might not have: connection errors, timeouts (not the caller's abort). */
function unavailable(call: UpstreamCall, err: unknown): unknown {
  if (call.signal.aborted) return err;
  return new TextUpstreamUnavailable(`upstream unreachable: ${err instanceof Error ? err.message : err}`);
}

const isUnavailable = (statusCode: number) => statusCode >= 500 || statusCode === 429;

function dispatchOptions(call: UpstreamCall) {
  return { path: call.path, method: 'POST' as const, headers: call.headers, body: call.body instanceof Uint8Array ? call.body : JSON.stringify(call.body), headersTimeout: call.timeoutMs, bodyTimeout: call.timeoutMs };
}

/** A streamed call: the answer's body is read as it arrives. */
export async function postJson(call: UpstreamCall): Promise<StreamedResponse> {
  let response: StreamedResponse;
  try {
    response = await requestStreamed(poolFor(call.origin), dispatchOptions(call), call.signal);
  } catch (err) {
    throw unavailable(call, err);
  }
  if (isUnavailable(response.statusCode)) {
    await response.body.dump().catch(() => undefined);
    throw new TextUpstreamUnavailable(`upstream answered ${response.statusCode}`);
  }
  return response;
}

/** A non-streamed call: the answer is read whole (a body cut off midway is a failure to fail over from). */
export function postJsonWhole(call: UpstreamCall): Promise<WholeResponse> {
  // One `then` rather than an async function around an await: the whole-call path's fewer turns.
  return requestWhole(poolFor(call.origin), dispatchOptions(call), call.signal).then(
    (response) => {
      if (isUnavailable(response.statusCode)) throw new TextUpstreamUnavailable(`upstream answered ${response.statusCode}`);
      return response;
    },
    (err: unknown) => {
      throw unavailable(call, err);
    },
  );
}

/** One server-sent event: its `event:` name where it has one, and its `data:` lines joined. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Reads server-sent events from a response body. One event is held until it is whole, so an event
 * over the process's cap on answers (upstream-read.ts) cuts the stream off: an upstream that never
 * ends its event cannot fill the memory. Nothing of that event was forwarded, so before the first
 * one another channel may still take the call. Lines may end in CRLF (the Gemini API's do).
 */
export async function* sseEvents(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  // A read can end inside a multi-byte character: the decoder keeps its first bytes for the next.
  const decoder = new StringDecoder('utf8');
  const cap = maxAnswerBytes();
  let buffer = '';
  // A CR at the end of a read may be the first half of a CRLF: it waits for the next read.
  let carry = '';
  for await (const chunk of body) {
    let text = carry + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    carry = text.endsWith('\r') ? '\r' : '';
    if (carry) text = text.slice(0, -1);
    buffer += text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
    if (buffer.length > cap) throw new TextUpstreamUnavailable(new UpstreamAnswerCut('too_large', cap).message);
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
      const name = lines.find((line) => line.startsWith('event:'))?.slice(6).trim();
      if (data) yield name ? { event: name, data } : { data };
    }
  }
}

/** The `data:` payload of each server-sent event. */
export async function* sseData(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  for await (const event of sseEvents(body)) yield event.data;
}

/**
 * What the text adapters share: the channel's address (parsed once: the providers are kept per
 * channel row), its request headers with the secret, and a timed JSON POST to it.
 */
export abstract class UpstreamText implements TextProvider {
  private readonly headers: Record<string, string>;
  private readonly origin: string;
  private readonly basePath: string;

  constructor(
    protected readonly channel: Channel,
    private readonly timeoutMs: number,
    headers: Record<string, string>,
  ) {
    this.headers = { 'content-type': 'application/json', ...headers };
    // The channel service stores only http(s) URLs, without a trailing slash.
    const base = new URL(channel.base_url ?? '');
    this.origin = base.origin;
    this.basePath = base.pathname === '/' ? '' : base.pathname;
  }

  private upstreamCall(path: string, body: unknown, signal: CallSignal, headers?: Record<string, string>): UpstreamCall {
    return { origin: this.origin, path: `${this.basePath}${path}`, headers: headers ? { ...this.headers, ...headers } : this.headers, body, timeoutMs: this.timeoutMs, signal };
  }

  /** A streamed call; `headers`: a same-format caller's vendor headers (core/text/call.ts), never credentials. */
  post(path: string, body: unknown, signal: CallSignal, headers?: Record<string, string>) {
    return postJson(this.upstreamCall(path, body, signal, headers));
  }

  /** A non-streamed call, its answer read whole. */
  postWhole(path: string, body: unknown, signal: CallSignal, headers?: Record<string, string>) {
    return postJsonWhole(this.upstreamCall(path, body, signal, headers));
  }

  abstract generate(request: TextRequest, signal: CallSignal): Promise<TextResult>;
  abstract stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk>;
}
