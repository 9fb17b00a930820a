// A signal that aborts after a time or when another signal does, with its timer and listener dropped
// once the work is done: a task's deadline may be half an hour away, and a timer per call kept that
// long (as AbortSignal.timeout with a listener is) would pile up under load.

export interface Linked {
  signal: AbortSignal;
  /** True when the time ran out (not the other signal). */
  timedOut(): boolean;
  /** Aborts at once (a rule of the caller's own was broken). */
  abortNow(): void;
  done(): void;
}

export function abortAfter(ms: number, also?: AbortSignal): Linked {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, Math.max(0, ms));
  const follow = () => controller.abort(also!.reason);
  if (also?.aborted) follow();
  else also?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    abortNow: () => controller.abort(new Error('aborted')),
    done() {
      clearTimeout(timer);
      also?.removeEventListener('abort', follow);
    },
  };
}
