// Callbacks share WEBHOOK_WORKERS slots. A receiver that hangs holds a slot for the whole webhook
// timeout per attempt, so an account with many tasks and a slow receiver would hold them all and
// delay every other account's callbacks. Each host may use a quarter of the slots in a process;
// a callback to a host at its share waits (not an attempt) while the others go out.

/** How long a callback to a busy host waits before it is tried again; not counted as an attempt. */
export const HOST_BUSY_WAIT_MS = 1000;

export class HostSlots {
  private readonly busy = new Map<string, number>();
  readonly perHost: number;

  constructor(workers: number) {
    this.perHost = Math.max(1, Math.floor(workers / 4));
  }

  /** Takes a slot of the host; false when it has its share already. */
  take(host: string): boolean {
    const used = this.busy.get(host) ?? 0;
    if (used >= this.perHost) return false;
    this.busy.set(host, used + 1);
    return true;
  }

  give(host: string): void {
    const used = (this.busy.get(host) ?? 1) - 1;
    if (used <= 0) this.busy.delete(host);
    else this.busy.set(host, used);
  }

  /** Runs `send` in a slot of the url's host, or answers undefined at once when the host is at its share. */
  async within<T>(url: URL, send: () => Promise<T>): Promise<T | undefined> {
    if (!this.take(url.host)) return undefined;
    try {
      return await send();
    } finally {
      this.give(url.host);
    }
  }
}
