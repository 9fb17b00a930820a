import type { Readable } from 'node:stream';
import { getGlobalDispatcher, request, type Dispatcher, type FormData } from 'undici';
import { readBoundedText } from './upstream-read.ts';
import { requestWhole, type WholeResponse } from './upstream-whole.ts';

// The one HTTP client of every provider. A call names its URL (a channel's base URL keeps its own
// path), method, headers, body and a timeout that bounds the wait for headers, every read, and a
// whole answer from start to end; the answer is read whole under the process's cap, or handed over
// as a body to read as it arrives (downloads, uploads of a form). The text adapters' pooled JSON
// posts (upstream-http.ts) use the same readers.

export interface UpstreamRequest {
  /** An absolute URL; `path` is appended to its path (a channel's base URL may carry one). */
  url: string | URL;
  path?: string;
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable | null;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The address-checked dispatcher for callers' URLs; the process's default otherwise. */
  dispatcher?: Dispatcher;
}

/** The origin and the full path of a call: the base URL's path without its trailing slash, then `path`. */
export function target(url: string | URL, path?: string): { origin: string; path: string } {
  const base = typeof url === 'string' ? new URL(url) : url;
  // Without a path the URL is called as it is, query included.
  if (path === undefined) return { origin: base.origin, path: `${base.pathname}${base.search}` };
  const basePath = base.pathname === '/' ? '' : base.pathname.replace(/\/+$/, '');
  return { origin: base.origin, path: `${basePath}${path}` };
}

/** The answer read whole under the process's cap, and within `timeoutMs` from the first byte to the last. */
export function upstreamWhole(call: UpstreamRequest): Promise<WholeResponse> {
  const { origin, path } = target(call.url, call.path);
  return requestWhole(
    call.dispatcher ?? getGlobalDispatcher(),
    { origin, path, method: call.method ?? 'GET', headers: call.headers, body: call.body ?? undefined, headersTimeout: call.timeoutMs, bodyTimeout: call.timeoutMs },
    call.signal ?? AbortSignal.timeout(call.timeoutMs * 2 + 1000),
  );
}

/** The answer with its body still to read (a download), or a call whose body is a form or a stream. */
export function upstreamResponse(call: Omit<UpstreamRequest, 'body'> & { body?: UpstreamRequest['body'] | FormData }): Promise<Dispatcher.ResponseData> {
  const { origin, path } = target(call.url, call.path);
  return request(`${origin}${path}`, {
    method: call.method ?? 'GET',
    headers: call.headers,
    body: call.body ?? undefined,
    signal: call.signal,
    dispatcher: call.dispatcher,
    headersTimeout: call.timeoutMs,
    bodyTimeout: call.timeoutMs,
  });
}

/** A response's body as text, under the process's cap and the call's deadline. */
export const answerText = (response: Dispatcher.ResponseData, timeoutMs: number): Promise<string> =>
  readBoundedText(response.body, { deadlineMs: timeoutMs });

/**
 * A JSON call whose answers a vendor classifies: a 2xx answer's JSON is returned; any other answer
 * goes to `refuse`, which returns the error to throw (the vendor's own reading of its error body).
 * A body that is not JSON reaches `refuse` as undefined.
 */
export async function upstreamJson(call: UpstreamRequest, refuse: (status: number, json: unknown) => Error): Promise<unknown> {
  const response = await upstreamWhole(call);
  let json: unknown;
  try {
    json = response.text() === '' ? {} : JSON.parse(response.text());
  } catch {
    json = undefined;
  }
  if (response.statusCode >= 200 && response.statusCode < 300 && json !== undefined) return json;
  throw refuse(response.statusCode, json);
}
