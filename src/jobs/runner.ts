import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from '../db/index.ts';
import type { Database, Job, JobKind } from '../db/types.ts';
import { claim, finish, releaseAll, renew, reschedule } from './jobs.repo.ts';

export type JobOutcome = { done: true } | { retryAt: number; error?: string };
export type JobHandler = (job: Job) => Promise<JobOutcome>;

export interface RunnerOptions {
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  /** How often the leases of running jobs are renewed; a third of the lease by default. */
  heartbeatMs?: number;
  /** The kinds this runner claims (all by default): poll jobs have a runner of their own. */
  kinds?: { only: readonly JobKind[] } | { except: readonly JobKind[] };
}

/** One run of one job; `lost` once a renewal found the job leased to another process. */
interface Held {
  lost: boolean;
}

const MAX_BACKOFF_MS = 60_000;

// Claims due jobs with a lease and runs them. Handlers are idempotent: a job may run again after a
// crash, so every one of them re-reads state and acts only on a compare-and-set. While a handler
// runs, one heartbeat per runner renews the leases of all its running jobs, so a slow callback or
// upstream call is not started again elsewhere; only a runner that is gone stops renewing.
export class JobRunner {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private running = false;
  private inFlight = new Set<Promise<void>>();
  private held = new Map<number, Held>();
  private heartbeat?: NodeJS.Timeout;
  private renewing = false;
  private wakeUp?: () => void;
  private loopDone?: Promise<void>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly logger: Logger,
    private readonly handlers: Partial<Record<JobKind, JobHandler>>,
    private readonly options: RunnerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const every = this.options.heartbeatMs ?? Math.max(1, Math.floor(this.options.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.renewLeases(), every);
    this.heartbeat.unref();
    this.loopDone = this.loop();
  }

  /** Called after this process enqueues a job, so it runs now rather than at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const free = this.options.concurrency - this.inFlight.size;
      let claimed: Job[] = [];
      if (free > 0) {
        try {
          claimed = await claim(this.db, this.dialect, this.owner, free, this.options.leaseMs, this.options.kinds);
        } catch (err) {
          this.logger.error({ err }, 'claiming jobs failed');
        }
      }
      // A job still running here whose lease ran out (renewals failing) is ours again: not run twice.
      for (const job of claimed) if (!this.held.has(job.id)) this.track(this.run(job));
      if (claimed.length === free && free > 0) continue;
      await this.sleep(free > 0 ? this.options.pollMs : undefined);
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => {
      this.inFlight.delete(work);
      this.wake();
    });
  }

  private sleep(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      const self = this;
      function done() {
        if (timer) clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private async renewLeases(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    const ids = [...this.held.keys()];
    try {
      const kept = new Set(await renew(this.db, ids, this.owner, this.options.leaseMs));
      for (const id of ids) {
        const held = this.held.get(id);
        if (!held || kept.has(id)) continue;
        held.lost = true;
        this.held.delete(id);
        this.logger.warn({ job: id }, 'job lease lost to another process; its outcome will not be recorded here');
      }
    } catch (err) {
      // The next beat tries again; a job whose lease runs out meanwhile may be run again elsewhere.
      this.logger.error({ err, jobs: ids.length }, 'renewing job leases failed');
    } finally {
      this.renewing = false;
    }
  }

  private async run(job: Job): Promise<void> {
    const held: Held = { lost: false };
    this.held.set(job.id, held);
    try {
      await this.runHeld(job, held);
    } finally {
      if (this.held.get(job.id) === held) this.held.delete(job.id);
    }
  }

  private async runHeld(job: Job, held: Held): Promise<void> {
    const handler = this.handlers[job.kind];
    let outcome: JobOutcome;
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      outcome = await handler(job);
    } catch (err) {
      const backoff = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(job.attempts, 7));
      this.logger.warn({ err, job: job.id, kind: job.kind, task: job.task_id }, 'job failed; will retry');
      outcome = { retryAt: Date.now() + backoff, error: err instanceof Error ? err.message : String(err) };
    }
    // Another process runs it now; finish and reschedule check the owner too, this saves the round trip.
    if (held.lost) return;
    try {
      if ('done' in outcome) await finish(this.db, job.id, this.owner);
      else await reschedule(this.db, job.id, this.owner, outcome.retryAt, outcome.error);
    } catch (err) {
      // The lease runs out and another process takes the job over: nothing is lost.
      this.logger.error({ err, job: job.id }, 'recording a job outcome failed');
    }
  }

  /** Stops claiming, lets in-flight jobs finish (bounded), then hands back any remaining leases. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loopDone;
    const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.allSettled([...this.inFlight]), timeout]);
    clearInterval(this.heartbeat);
    await releaseAll(this.db, this.owner).catch((err) => this.logger.error({ err }, 'releasing leases failed'));
  }
}
