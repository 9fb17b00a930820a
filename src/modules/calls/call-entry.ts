import type { ServerResponse } from 'node:http';
import { ApiError, typeForStatus } from '../../core/errors.ts';
import type { UsageClasses } from '../../core/usage.ts';
import type { UsageCost } from '../billing/usage-cost.ts';
import { BodyCapture } from './call-bodies.ts';

// One call's line in the call log while the call runs. The HTTP edge opens it for every route that
// declares a call surface (calls.hooks.ts), the text path and the task submit fill in what only they
// know (the channel, usage and cost, the task), and the row is queued once both the response and the
// text call have ended: a stream cut by its caller settles after the socket closed.

export type CallSurface = 'messages' | 'chat' | 'responses' | 'gemini' | 'native' | 'images' | 'videos' | 'avatars';
export type CallStatus = 'ok' | 'failed' | 'refused' | 'aborted';
export const CALL_STATUSES: readonly CallStatus[] = ['ok', 'failed', 'refused', 'aborted'];

export interface CallError {
  code: string;
  message: string;
}

export const GONE: CallError = { code: 'client_closed', message: 'The caller closed the connection before the answer' };

/** An error as the log shows it: our own refusals as they were answered, anything else without its internals. */
export function errorOf(err: unknown): CallError {
  if (err instanceof ApiError) return { code: err.type, message: err.message };
  const status = (err as { statusCode?: number }).statusCode;
  if (status && status < 500) return { code: typeForStatus(status), message: (err as Error).message };
  return { code: typeForStatus(500), message: 'Internal error' };
}

/** What the text path or a submit knows of the call. */
export interface CallFacts {
  model?: string;
  channel?: { id: string; name: string; type: string };
  /** The text path's own ending; without it the HTTP status says (4xx refused, 5xx failed). */
  outcome?: 'ok' | 'failed' | 'aborted';
  usage?: UsageClasses;
  /** Ledger units; a task submit has only `total` (its hold). */
  cost?: Partial<UsageCost> & { total: number };
  firstTokenMs?: number;
  taskId?: string;
  error?: CallError;
}

export class CallEntry {
  readonly facts: CallFacts = {};
  /** The request and answer, kept only for a key with `log_bodies` (call-bodies.ts). */
  bodies: BodyCapture | undefined = undefined;
  readonly startedAt = Date.now();
  private readonly startedHr = performance.now();
  private waits = 1;
  private queued = false;

  constructor(
    readonly surface: CallSurface,
    private readonly done: (entry: CallEntry) => void,
  ) {}

  /** Milliseconds since the request arrived. */
  elapsed(): number {
    return Math.round(performance.now() - this.startedHr);
  }

  /** The first token of a stream reached us. */
  firstToken(): void {
    this.facts.firstTokenMs ??= this.elapsed();
  }

  /** A part of the call (the text path) the row waits for as well as the response. */
  begin(): void {
    this.waits++;
  }

  /**
   * The key guard calls this for a key with `log_bodies`, once the body is parsed: the body is
   * kept (redacted) and the response tapped from here on. `secret` is the key string the caller sent.
   */
  keepBodies(body: unknown, raw: ServerResponse, secret: string, maxBytes: number): void {
    this.bodies = new BodyCapture(body, secret, maxBytes);
    this.bodies.tap(raw);
  }

  /** Not a call after all (a token count): no row. */
  skip(): void {
    this.queued = true;
  }

  /** A part ended: the last one queues the row. */
  end(): void {
    if (--this.waits > 0 || this.queued) return;
    this.queued = true;
    this.done(this);
  }
}

/** A task submit's facts: its task and what the submit held (the receipt's price). */
export function noteSubmit(log: CallEntry, taskId: string, heldUnits: number): void {
  log.facts.taskId = taskId;
  log.facts.cost = { total: heldUnits };
}
