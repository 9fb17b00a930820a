import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientGone, ClientStalled, RequestSignal } from '../lib/call-signal.ts';

// Server-sent events written straight to the socket, each event flushed as it is produced.
// The call's signal aborts when the client goes away, so the upstream call stops with it.
// Backpressure: a write that leaves more than the socket's high-water mark buffered returns false,
// and the producer awaits `drained()` before it pulls the next chunk from the upstream, so a caller
// that reads slowly (or not at all) slows the upstream read instead of filling our memory.

export interface SseStream {
  /** False: the caller has not taken what is buffered yet; await `drained()` before producing more. */
  send(data: unknown, event?: string): boolean;
  /** Whole events already encoded (a same-format upstream's, forwarded as they came), in one write. */
  write(parts: Buffer[]): boolean;
  /**
   * Resolves when the caller has taken the buffered bytes, or is gone. A caller that takes nothing
   * for `stallMs` is cut off: the call's signal aborts (the upstream call stops) and the socket closes.
   */
  drained(): Promise<void>;
  end(): void;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * `signal` (the call's, already given to the upstream call) aborts when the client goes away: a
 * RequestSignal, as an AbortController costs each stream its EventTarget machinery.
 */
export function startSse(request: FastifyRequest, reply: FastifyReply, signal: RequestSignal, stallMs: number): SseStream {
  reply.hijack();
  const raw = reply.raw;
  // getHeaders() is a fresh object already (Fastify's copy): the stream's headers go onto it rather
  // than into a third copy.
  raw.writeHead(200, Object.assign(reply.getHeaders() as Record<string, string>, SSE_HEADERS));
  // No flushHeaders(): every stream writes its first events at once, and the headers go with
  // them in one packet (a write of their own cost each stream a syscall).
  // (Called only where the socket has it: light-my-request's mock socket has not, and a throw here,
  // after the hijack, would leave the request without an answer.)
  request.raw.socket?.setNoDelay?.(true);
  raw.on('close', () => {
    if (!raw.writableFinished) signal.abort(new ClientGone());
  });
  // write() answers false for any write over the high-water mark, even one the socket took at once
  // (a fast reader, a large read of the upstream forwarded): only bytes still buffered mean waiting.
  const taken = (wrote: boolean) => wrote || raw.writableLength < raw.writableHighWaterMark;
  return {
    send(data, event) {
      if (raw.destroyed) return true;
      return taken(raw.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`));
    },
    write(parts) {
      if (raw.destroyed) return true;
      if (parts.length === 1) return taken(raw.write(parts[0]));
      raw.cork();
      for (const part of parts) raw.write(part);
      raw.uncork();
      return taken(false);
    },
    drained() {
      if (raw.destroyed || raw.writableLength < raw.writableHighWaterMark) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(stalled);
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        const stalled = setTimeout(() => {
          signal.abort(new ClientStalled(stallMs));
          raw.destroy();
        }, stallMs);
        raw.on('drain', done);
        raw.on('close', done);
      });
    },
    end() {
      if (!raw.destroyed) raw.end();
    },
  };
}

/** How a stream that ended early is logged: a client that left is information, anything else a warning. */
export function logStreamEnd(request: FastifyRequest, err: unknown): void {
  if (err instanceof ClientGone) request.log.info({ reqId: request.id, reason: err.message }, 'client left during the stream');
  else request.log.warn({ err, reqId: request.id }, 'stream ended by an error');
}

/** A signal for a non-streamed call: aborts when the client closes the connection early. */
export function clientGone(reply: FastifyReply): RequestSignal {
  const signal = new RequestSignal();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) signal.abort(new ClientGone());
  });
  return signal;
}
