// What an upstream call needs of a cancellation signal. AbortSignal has it, and so does the cheaper
// RequestSignal below; undici accepts either (it only listens for 'abort').

/**
 * Why a call was cut off when its client closed the connection before the answer: not a failure of
 * ours, so it is logged as information, not as an error.
 */
export class ClientGone extends Error {
  constructor() {
    super('The client closed the connection before the answer');
    this.name = 'ClientGone';
  }
}

/** A streamed call's client that took none of the answer for too long: cut off like one that left. */
export class ClientStalled extends ClientGone {
  constructor(stallMs: number) {
    super();
    this.message = `The client read nothing of the stream for ${stallMs / 1000} s`;
    this.name = 'ClientStalled';
  }
}

export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Cancels one non-streamed call when its client goes away. An AbortController per request cost
 * ~3% of a text call's CPU in the profile (EventTarget machinery); this is a list of listeners.
 * Listeners run once, when it aborts.
 */
export class RequestSignal implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}
