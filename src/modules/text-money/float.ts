// One float: a durable hold a process keeps for a key, which its calls take their holds from in
// memory (floats.ts has the rules). What it knows: how much it holds, how much its settled
// calls spent, how much its calls in flight reserved, and the spends not yet committed.

export class TextFloat {
  spent = 0;
  reserved = 0;
  calls = 0;
  retiring = false;
  lastUsed: number;
  /** Spends queued and not yet committed: a close waits for them, so it counts every one. */
  unsettledSpends = 0;
  private allSettled?: () => void;

  constructor(
    readonly id: string,
    readonly userId: string,
    readonly keyId: string,
    readonly keyLimited: boolean,
    public amount: number,
    readonly openedAt: number,
  ) {
    this.lastUsed = openedAt;
  }

  get free(): number {
    return this.amount - this.spent - this.reserved;
  }

  spendSettled(): void {
    if (--this.unsettledSpends > 0) return;
    const settled = this.allSettled;
    this.allSettled = undefined;
    settled?.();
  }

  /** Resolves once every spend queued so far has committed or failed. */
  spendsSettled(): Promise<void> {
    if (this.unsettledSpends === 0) return Promise.resolve();
    const before = this.allSettled;
    return new Promise((resolve) => {
      this.allSettled = () => {
        before?.();
        resolve();
      };
    });
  }

  movement(amount: number, note: string) {
    return { userId: this.userId, keyId: this.keyId, keyLimited: this.keyLimited, amount, ref: this.id, note };
  }
}
