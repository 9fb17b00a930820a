import type { Dispatcher } from 'undici';
import type { CallSignal } from '../lib/call-signal.ts';
import { readBoundedText } from './upstream-read.ts';

// A streamed upstream answer through a small dispatch handler on the pool (as upstream-whole.ts
// does for whole answers) instead of `request()`, which puts the body in a Node Readable whose
// async iterator costs each stream its readable and end events on later ticks. The chunks that
// one socket read brings (an upstream's every event is its own HTTP chunk) are handed to the
// reader joined, as the Readable did: a waiting reader is woken once, after the read. Past
// HIGH_WATER unread bytes the connection is paused until the reader catches up.

const HIGH_WATER = 256 * 1024;
/** An answer read whole through `text()` (an error's body) must be over within this. */
const TEXT_DEADLINE_MS = 30_000;
const DONE: IteratorResult<Buffer> = { value: undefined, done: true };

/** A streamed answer's body: read once, by `for await` (or whole, by `text()`). */
export class StreamedBody implements AsyncIterableIterator<Buffer> {
  private queue: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private paused = false;

  constructor(
    /** Continues a paused connection. */
    private readonly resume: () => void,
    /** Closes the connection (a reader that stopped early). */
    private readonly cancel: () => void,
  ) {}

  /** A chunk from the connection; false pauses it. */
  push(chunk: Buffer): boolean {
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.wakeReader();
    this.paused = this.queued >= HIGH_WATER;
    return !this.paused;
  }

  end(): void {
    this.ended = true;
    this.wakeReader();
  }

  fail(err: unknown): void {
    this.failure = err;
    this.wakeReader();
  }

  next(): Promise<IteratorResult<Buffer>> {
    if (this.queued > 0 || this.failure !== undefined || this.ended) return this.step();
    // Resolved after the socket read that woke it, so that read's chunks all come at once.
    return new Promise<void>((resolve) => (this.wake = resolve)).then(() => this.step());
  }

  /** The reader stopped before the end (break, or a throw in its loop): the upstream call stops. */
  return(): Promise<IteratorResult<Buffer>> {
    if (!this.ended && this.failure === undefined) this.cancel();
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The rest, whole, under the process's cap on answers (upstream-read.ts). */
  text(): Promise<string> {
    return readBoundedText(this, { deadlineMs: TEXT_DEADLINE_MS });
  }

  /** Reads the rest and drops it (the connection stays usable). */
  async dump(): Promise<void> {
    for await (const _ of this);
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Everything queued, joined; then the failure or the end. */
  private step(): Promise<IteratorResult<Buffer>> {
    if (this.queued > 0) {
      const value = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue, this.queued);
      this.queue = [];
      this.queued = 0;
      if (this.paused) {
        this.paused = false;
        this.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return Promise.resolve(DONE);
  }
}

/**
 * Sends a streamed request when called (inside the generator that reads the answer): the answer's
 * body once the upstream answered; a refusal is thrown as the caller's error.
 */
export type OpenStream = () => Promise<AsyncIterable<Buffer>>;

export interface StreamedResponse {
  statusCode: number;
  body: StreamedBody;
}

class StreamedAnswer implements Dispatcher.DispatchHandler {
  private body: StreamedBody | undefined;
  private abortConnection: ((reason?: Error) => void) | undefined;
  private readonly onAbort: () => void;

  constructor(
    private readonly signal: CallSignal,
    private readonly resolve: (response: StreamedResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    // Assigned here, not as a class field (see upstream-whole.ts).
    this.onAbort = () => this.abortConnection?.(this.signal.reason as Error);
    signal.addEventListener('abort', this.onAbort);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.signal.aborted) abort(this.signal.reason as Error);
    else this.abortConnection = abort;
  }

  onHeaders(statusCode: number, _headers: unknown, resume: () => void): boolean {
    // 1xx answers come before the real one.
    if (statusCode < 200) return true;
    this.body = new StreamedBody(resume, () => this.abortConnection?.(new Error('the reader stopped')));
    this.resolve({ statusCode, body: this.body });
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.body!.push(chunk);
  }

  onComplete(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.body?.end();
  }

  onError(err: Error): void {
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.body) this.body.fail(err);
    else this.reject(err);
  }
}

/** One request on `dispatcher`; resolves at the answer's headers, its body read as it arrives. */
export function requestStreamed(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: CallSignal): Promise<StreamedResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    dispatcher.dispatch(options, new StreamedAnswer(signal, resolve, reject));
  });
}
