import type { Dispatcher } from 'undici';
import type { CallSignal } from '../lib/call-signal.ts';
import { badGateway } from '../core/errors.ts';
import { maxAnswerBytes, UpstreamAnswerCut } from './upstream-read.ts';

// A non-streamed upstream answer is read whole into memory by a small dispatch handler on the
// same undici pool, instead of through `request()`: that builds an AsyncResource, a parsed header
// object and a Node Readable for the body on every call, and then a promise to consume it, which
// a JSON answer read at once never needs.

/** An upstream's whole answer. */
export interface WholeResponse {
  statusCode: number;
  /** One response header's value (the first, by its lower-case name). */
  header(name: string): string | undefined;
  /** The body as it came. */
  bytes(): Buffer;
  text(): string;
  /** The body parsed; a body that is not JSON is a 502 (the upstream answered, so no failover). */
  json(): unknown;
}

class WholeBody implements WholeResponse {
  constructor(
    readonly statusCode: number,
    private readonly chunks: Buffer[],
    /** undici's raw headers, name and value in turn: parsed only when one is asked for. */
    private readonly rawHeaders: Buffer[] | string[] | null,
  ) {}

  header(name: string): string | undefined {
    const raw = this.rawHeaders ?? [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (raw[i]!.toString().toLowerCase() === name) return raw[i + 1]!.toString();
    }
    return undefined;
  }

  private joined: Buffer | undefined;
  private decoded: string | undefined;

  /** Joined once: a same-format answer is parsed for its usage and then sent as these bytes. */
  bytes(): Buffer {
    this.joined ??= this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return this.joined;
  }

  text(): string {
    this.decoded ??= this.chunks.length === 0 ? '' : this.bytes().toString('utf8');
    return this.decoded;
  }

  json(): unknown {
    try {
      return JSON.parse(this.text());
    } catch {
      throw badGateway(`upstream answered ${this.statusCode} with a body that is not JSON`);
    }
  }
}

/**
 * undici's handler interface of the dispatcher core (the one `request()` implements itself):
 * the answer's status and body chunks, and the caller's signal wired to the connection's abort.
 */
class WholeAnswer implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private rawHeaders: Buffer[] | string[] | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abortConnection: ((reason?: Error) => void) | undefined;
  private readonly onAbort: () => void;
  /** performance.now() past which a read cuts the answer off (no timer per call: see onData). */
  private deadlineAt = Infinity;

  constructor(
    private readonly signal: CallSignal,
    private readonly maxBytes: number,
    /** The body's total deadline from its headers (the connection's body timeout is only between reads). */
    private readonly bodyDeadlineMs: number | undefined,
    private readonly resolve: (response: WholeResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    // Assigned here, not as a class field: tsx (esbuild's keepNames) names a field's arrow function
    // with a defineProperty call on every instance, which showed in the profile.
    this.onAbort = () => this.abortConnection?.(this.signal.reason as Error);
    signal.addEventListener('abort', this.onAbort);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.signal.aborted) abort(this.signal.reason as Error);
    else this.abortConnection = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null): boolean {
    // 1xx answers come before the real one.
    if (statusCode < 200) return true;
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    if (this.bodyDeadlineMs !== undefined && this.deadlineAt === Infinity) this.deadlineAt = performance.now() + this.bodyDeadlineMs;
    return true;
  }

  onData(chunk: Buffer): boolean {
    // Checked as each read arrives rather than by a timer per call (a timer set and cleared on
    // every call showed in the profile): an answer that trickles past its deadline is cut at its
    // next read; one that goes silent meets the connection's body timeout, counted from its last
    // read, so an answer ends at most one body timeout past its deadline.
    if (performance.now() > this.deadlineAt) {
      this.abortConnection?.(new UpstreamAnswerCut('too_slow', this.bodyDeadlineMs!));
      return false;
    }
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.abortConnection?.(new UpstreamAnswerCut('too_large', this.maxBytes));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.done();
    this.resolve(new WholeBody(this.statusCode, this.chunks, this.rawHeaders));
  }

  onError(err: Error): void {
    this.done();
    this.reject(err);
  }

  private done(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/**
 * One request on `dispatcher`, its answer read whole under the process's cap on answers
 * (upstream-read.ts) and, after its headers, within `options.bodyTimeout` in total. Rejects on
 * connection errors, timeouts, aborts, and with UpstreamAnswerCut on an answer over `maxBytes` or late.
 */
export function requestWhole(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: CallSignal, maxBytes = maxAnswerBytes()): Promise<WholeResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const deadline = typeof options.bodyTimeout === 'number' && options.bodyTimeout > 0 ? options.bodyTimeout : undefined;
    dispatcher.dispatch(options, new WholeAnswer(signal, maxBytes, deadline, resolve, reject));
  });
}
