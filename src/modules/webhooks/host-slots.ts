// Callbacks share WEBHOOK_WORKERS slots. A receiver that hangs holds a slot for the whole webhook
// timeout per attempt, so an account with many tasks and a slow receiver would hold them all and
// delay every other account's callbacks. Each host may use a quarter of the slots in a process. A
// callback to a host at its share waits a moment for one of the host's slots (a quick receiver
// frees one in milliseconds), then gives its slot back and is tried again later, not as an attempt.

/** How long a callback waits, in its slot, for a slot of its host. */
const HOST_WAIT_MS = 250;
/** How long a callback to a host that stayed busy waits before it is tried again; not an attempt. */
export const HOST_BUSY_WAIT_MS = 1000;

export class HostSlots {
  private readonly busy = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  readonly perHost: number;

  constructor(workers: number) {
    this.perHost = Math.max(1, Math.floor(workers / 4));
  }

  /** Runs `send` in a slot of the url's host; undefined, and nothing sent, when none came free in time. */
  async within<T>(url: URL, send: () => Promise<T>): Promise<T | undefined> {
    if (!(await this.take(url.host))) return undefined;
    try {
      return await send();
    } finally {
      this.give(url.host);
    }
  }

  private take(host: string): boolean | Promise<boolean> {
    const used = this.busy.get(host) ?? 0;
    if (used < this.perHost) {
      this.busy.set(host, used + 1);
      return true;
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(host) ?? [];
      this.waiting.set(host, queue);
      const handOver = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(handOver), 1);
        if (queue.length === 0 && this.waiting.get(host) === queue) this.waiting.delete(host);
        resolve(false);
      }, HOST_WAIT_MS);
      timer.unref();
      queue.push(handOver);
    });
  }

  private give(host: string): void {
    const queue = this.waiting.get(host);
    const next = queue?.shift();
    if (next) {
      // The slot passes to a callback waiting for this host: the host's count stays.
      if (queue!.length === 0) this.waiting.delete(host);
      next();
      return;
    }
    const used = (this.busy.get(host) ?? 1) - 1;
    if (used <= 0) this.busy.delete(host);
    else this.busy.set(host, used);
  }
}
