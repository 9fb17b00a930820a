import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { BlobStore } from '../../blobs/blob-store.ts';
import type { Database } from '../../db/types.ts';
import type { BodyCapture } from './call-bodies.ts';
import { BodiesStore } from './call-bodies-store.ts';
import { insertCalls, sweepCalls, type CallRow } from './calls.repo.ts';

// The call log's writer. A call only pushes its row onto an array; the rows are written by one
// multi-row INSERT when WRITE_EVERY_MS has passed since the first queued one or BATCH are waiting,
// whichever comes first, one write at a time. Rows that fail to write are logged and dropped: the
// log must never hold a call back or fail it. The sweeper deletes rows older than CALL_LOG_DAYS, and
// the bodies stored for them (a key's `log_bodies`, call-bodies-store.ts).

const WRITE_EVERY_MS = 200;
const BATCH = 500;
/** Rows waiting, queued or being written, past which new ones are dropped: a slow database must not fill memory. */
const MAX_WAITING = 100_000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 1000;
const DAY_MS = 86_400_000;

export interface CallLogDeps {
  db: Kysely<Database>;
  logger: Pick<Logger, 'error' | 'warn'>;
  days: number;
  /** The result store, where the bodies of `log_bodies` keys' calls go. */
  store: BlobStore;
}

export class CallLog {
  private rows: CallRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private dropped = 0;

  readonly bodies: BodiesStore;

  constructor(private readonly deps: CallLogDeps) {
    this.bodies = new BodiesStore(deps.store, deps.logger, deps.days);
  }

  /** A row whose call kept its bodies: queued once they are stored, naming them only if they were. */
  pushWithBodies(row: CallRow, capture: BodyCapture): void {
    this.bodies.write(row.id, row.time, capture, (key) => {
      row.bodies = key;
      this.push(row);
    });
  }

  push(row: CallRow): void {
    if (this.rows.length + this.inFlight >= MAX_WAITING) {
      if (this.dropped++ % 10_000 === 0) this.deps.logger.warn({ dropped: this.dropped }, 'call log rows dropped: the database takes them slower than calls come');
      return;
    }
    this.rows.push(row);
    if (this.rows.length >= BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), WRITE_EVERY_MS).unref();
  }

  /** Writes every queued row; a read after it sees this process's calls. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const taken = this.rows;
    this.rows = [];
    this.inFlight += taken.length;
    this.writing = this.writing.then(() => this.write(taken)).finally(() => (this.inFlight -= taken.length));
    return this.writing;
  }

  private async write(rows: CallRow[]): Promise<void> {
    for (let at = 0; at < rows.length; at += BATCH) {
      try {
        await insertCalls(this.deps.db, rows.slice(at, at + BATCH));
      } catch (err) {
        this.deps.logger.error({ err, rows: Math.min(BATCH, rows.length - at) }, 'call log rows not written');
      }
    }
  }

  /** Deletes the rows past CALL_LOG_DAYS, a batch at a time; the count deleted. */
  async sweep(now = Date.now()): Promise<number> {
    const before = now - this.deps.days * DAY_MS;
    let total = 0;
    for (;;) {
      // Each row is deleted by one sweeper, which then deletes the bodies it named.
      const { deleted, bodies } = await sweepCalls(this.deps.db, before, SWEEP_BATCH);
      if (bodies.length > 0) await this.bodies.delete(bodies);
      total += deleted;
      if (deleted < SWEEP_BATCH) return total;
    }
  }

  /** The sweeper, in processes that run workers. */
  start(): void {
    this.sweeper ??= setInterval(() => {
      this.sweep().catch((err) => this.deps.logger.warn({ err }, 'call log sweep failed'));
    }, SWEEP_EVERY_MS).unref();
  }

  /** At shutdown, after the last request: the sweeper stopped, every queued row written. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.bodies.drain();
    await this.flush();
  }
}
