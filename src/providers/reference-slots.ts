// How many reference downloads one process runs at once, in all and per account. A download waits on
// a caller's host, which may be slow on purpose; capped, such hosts hold at most these worker slots,
// and one account's hosts at most its share, so other accounts' tasks still find free slots.

export class DownloadSlots {
  private running = 0;
  private readonly byAccount = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly perAccount: number,
  ) {}

  /** A slot for `account`, as the function that gives it back; undefined when none is free. */
  tryTake(account: string): (() => void) | undefined {
    const mine = this.byAccount.get(account) ?? 0;
    if (this.running >= this.limit || mine >= this.perAccount) return undefined;
    this.running++;
    this.byAccount.set(account, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.running--;
      const left = (this.byAccount.get(account) ?? 1) - 1;
      if (left > 0) this.byAccount.set(account, left);
      else this.byAccount.delete(account);
    };
  }
}
