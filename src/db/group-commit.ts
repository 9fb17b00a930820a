import type { Kysely, Transaction } from 'kysely';
import type { Database } from './types.ts';
import { NotConnected, WholeBatchRefused, isStoreUnavailable } from './errors.ts';

// The whole-batch writers' refusal is an error of the database layer (errors.ts); still importable from here.
export { WholeBatchRefused } from './errors.ts';

/** Turns of the event loop a batch may wait for more items while they keep coming. */
const MAX_WAIT_TURNS = 3;
/** One-item batches in a row after which a batch stops waiting (a lone caller gains nothing by it). */
const LONELY_BATCHES = 3;

interface Pending<Item> {
  item: Item;
  /** Called once, after the commit (no error) or when the item could not be written. */
  settle: (error?: unknown) => void;
  /** Made only when `flush` has to wait for this item. */
  settled?: Promise<void>;
  /** For an item queued with `addSoon` or `queue` (nobody waits on it): when it must be written by; 0 for `add`. */
  dueAt: number;
  /** When a batch holding it first failed to reach the database. */
  firstFailedAt?: number;
}

const UNSENT_RETRY_MIN_MS = 200;
const UNSENT_RETRY_MAX_MS = 5000;
const UNSENT_RETRY_FOR_MS = 120_000;

/** How long an item queued with `addSoon` may wait for a batch to ride along with. */
export const SOON_MS = 2;

/**
 * Group commit: small writes that arrive while a batch is being written wait and go together into
 * the next transaction, so a burst pays for one commit, not one each. `write` handles a whole batch
 * and says, per item, why it could not be written (or undefined); a caller is answered only after
 * the commit. Used for task submits and for text-call holds and settlements.
 */
export class GroupCommit<Item> {
  private queued: Pending<Item>[] = [];
  private running = 0;
  /** Batches in a row that held one item: no one else is writing, so waiting would only add latency. */
  private lonely = 0;
  /** Batches being written now: `flush` waits for them too. */
  private writing = new Set<Pending<Item>[]>();
  private soonTimer: NodeJS.Timeout | undefined;
  /** Items of batches that never reached the database, waiting for it to answer again. */
  private unsent: Pending<Item>[] = [];
  private unsentTimer: NodeJS.Timeout | undefined;
  private unsentDelay = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** SQLite has one writer: one batch at a time. Postgres can commit several in parallel. */
    private readonly parallel: number,
    private readonly write: (trx: Transaction<Database>, items: Item[]) => Promise<(Error | undefined)[]>,
    /** Runs after each commit with the items it wrote. */
    private readonly committed: (items: Item[]) => void = () => {},
    /**
     * A way to write a whole batch at once that either writes every item or nothing (Postgres:
     * tasks/submit-statement.ts). Tried first; when it fails the batch goes through `write`. It may
     * say, per item, why an item was left out (as `write` does); nothing means every item was written.
     */
    private readonly writeWhole?: (items: Item[]) => Promise<(Error | undefined)[] | void>,
    private readonly maxBatch = 200,
  ) {}

  add(item: Item): Promise<void> {
    const committed = this.promised(item, 0);
    if (this.running < this.parallel) void this.drain();
    return committed;
  }

  /**
   * Queues an item that nobody waits on before answering (a text call's settlement): it goes with
   * the next batch, or alone after at most SOON_MS. One caller at a time then pays for one commit
   * per call instead of two (its settlement rides with the next call's hold).
   */
  addSoon(item: Item, withinMs = SOON_MS): Promise<void> {
    return new Promise((resolve, reject) => this.queue(item, withinMs, settler(resolve, reject)));
  }

  /**
   * `addSoon` without a promise: `settled` is called once the item is committed (no argument) or
   * could not be written. For the hottest queue (a text call's spend), whose promise, `.catch` and
   * `.finally` were measurable per call.
   */
  queue(item: Item, withinMs: number, settled: (error?: unknown) => void): void {
    const dueAt = performance.now() + withinMs;
    this.queued.push({ item, settle: settled, dueAt });
    if (this.running === 0 && (!this.soonTimer || dueAt < this.timerDueAt)) this.armSoonTimer(dueAt);
  }

  private timerDueAt = 0;

  private armSoonTimer(dueAt: number): void {
    clearTimeout(this.soonTimer);
    this.timerDueAt = dueAt;
    this.soonTimer = setTimeout(this.soonDue, Math.max(0, dueAt - performance.now()));
  }

  // One timer serves every item added soon: when it fires early for the first one still due
  // (the item it was set for rode with a batch), it waits for that one's time instead of writing
  // a lone item at every timer.
  private readonly soonDue = () => {
    this.soonTimer = undefined;
    let first = Infinity;
    for (const pending of this.queued) if (pending.dueAt > 0 && pending.dueAt < first) first = pending.dueAt;
    if (first === Infinity) return;
    if (first > performance.now()) this.armSoonTimer(first);
    else if (this.running < this.parallel) void this.drain();
  };

  /** Writes what is queued now; resolves once it and any batch being written have committed (or failed). */
  async flush(): Promise<void> {
    // Called on every balance read: nothing to build when nothing is queued or being written.
    if (this.queued.length === 0 && this.writing.size === 0) return;
    const waiting = [...this.queued, ...[...this.writing].flat()].map(settledOf);
    if (this.queued.length > 0 && this.running < this.parallel) void this.drain();
    await Promise.all(waiting);
  }

  private promised(item: Item, dueAt: number): Promise<void> {
    return new Promise<void>((resolve, reject) => this.queued.push({ item, settle: settler(resolve, reject), dueAt }));
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.queued.length > 0) {
        // Requests that arrive together are parsed in separate turns of the event loop, and a SQLite
        // transaction finishes within one: without a wait every batch held one item (measured:
        // 5,000 submits, 5,000 commits at ~88 µs each). One turn lets the others join; while the
        // queue still grows (under load) up to two more turns do (fewer, larger commits: SQLite's
        // share of a text call fell from ~67 to ~50 µs in the profile). When batches keep holding
        // one item (one caller at a time) only every eighth waits, to notice load. One lonely batch
        // is not enough to stop waiting: under load a wait now and then finds nobody, and the
        // unwaited batches after it held one item each (measured: 40% of all batches).
        const wait = this.queued.length < this.maxBatch && (this.lonely < LONELY_BATCHES || this.lonely % 8 === 0);
        for (let turn = 0, seen = 0; wait && turn < MAX_WAIT_TURNS && this.queued.length > seen && this.queued.length < this.maxBatch; turn++) {
          seen = this.queued.length;
          await new Promise((resolve) => setImmediate(resolve));
        }
        const batch = this.queued.splice(0, this.maxBatch);
        // A settlement riding with one caller's hold does not make company.
        this.lonely = batch.length > 1 && batch.filter((p) => p.dueAt === 0).length > 1 ? 0 : this.lonely + 1;
        let failures: (Error | undefined)[];
        this.writing.add(batch);
        try {
          failures = await this.writeBatch(batch.map((p) => p.item));
        } catch (error) {
          if (error instanceof NotConnected) this.retryUnsent(batch, error);
          else for (const pending of batch) settleSafely(pending, error);
          continue;
        } finally {
          this.writing.delete(batch);
        }
        this.unsentDelay = 0;
        this.committed(batch.filter((_, i) => !failures[i]).map((p) => p.item));
        batch.forEach((pending, i) => settleSafely(pending, failures[i]));
      }
    } finally {
      this.running--;
    }
  }

  /**
   * The database could not be reached, so nothing of the batch was sent. A caller waiting on its
   * item is told at once (it answers 503); an item nobody waits on (a settlement) is kept and
   * written once the database answers again, for up to UNSENT_RETRY_FOR_MS.
   */
  private retryUnsent(batch: Pending<Item>[], error: NotConnected): void {
    const now = performance.now();
    for (const pending of batch) {
      if (pending.dueAt === 0 || now - (pending.firstFailedAt ??= now) > UNSENT_RETRY_FOR_MS) settleSafely(pending, error);
      else this.unsent.push(pending);
    }
    if (this.unsent.length === 0 || this.unsentTimer) return;
    this.unsentDelay = Math.min(UNSENT_RETRY_MAX_MS, this.unsentDelay * 2 || UNSENT_RETRY_MIN_MS);
    this.unsentTimer = setTimeout(() => {
      this.unsentTimer = undefined;
      const again = this.unsent.splice(0);
      for (const pending of again) pending.dueAt = performance.now();
      this.queued.unshift(...again);
      if (this.running < this.parallel) void this.drain();
    }, this.unsentDelay);
    this.unsentTimer.unref();
  }

  private async writeBatch(items: Item[]): Promise<(Error | undefined)[]> {
    if (this.writeWhole) {
      try {
        return (await this.writeWhole(items)) ?? [];
      } catch (error) {
        // Refused (someone in the batch cannot pay): nothing was written, so write it item by item.
        if (!(error instanceof WholeBatchRefused)) throw error;
      }
    }
    // Up to its COMMIT a transaction that fails keeps nothing: a store outage before then is known
    // to have kept nothing, so the batch may be written again.
    let committing = false;
    try {
      return await this.db.transaction().execute(async (trx) => {
        const failures = await this.write(trx, items);
        committing = true;
        return failures;
      });
    } catch (error) {
      throw !committing && isStoreUnavailable(error) ? new NotConnected(error) : error;
    }
  }
}

/** A `queue` callback that throws must not keep the rest of its batch from being told. */
function settleSafely<Item>(pending: Pending<Item>, error: unknown): void {
  try {
    pending.settle(error);
  } catch {
    // the caller's own callback failed; its item's outcome stands
  }
}

const settler = (resolve: () => void, reject: (error: unknown) => void) => (error?: unknown) => (error === undefined ? resolve() : reject(error));

/** A promise that settles (never rejects) with the item; made on demand, as only `flush` needs one. */
function settledOf<Item>(pending: Pending<Item>): Promise<void> {
  if (!pending.settled) {
    const settle = pending.settle;
    pending.settled = new Promise((done) => {
      pending.settle = (error) => {
        try {
          settle(error);
        } finally {
          done();
        }
      };
    });
  }
  return pending.settled;
}
