import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './types.ts';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;
interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit for small, independent write transactions (task submits). Writes that arrive
 * together share one transaction, each inside its own savepoint: one that fails (402, say) is
 * rolled back alone, and the rest pay for one commit between them instead of one each. A caller's
 * promise settles only after the shared commit, so nothing is acknowledged before it is durable.
 */
export class WriteBatcher {
  private queue: Pending[] = [];
  private running = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** SQLite has one writer, so one batch at a time; Postgres can commit several in parallel. */
    private readonly parallel: number,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (this.running < this.parallel) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.running++;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.transaction().execute(async (trx) => {
            for (const [index, item] of batch.entries()) {
              const savepoint = sql.raw(`sp_${index}`);
              await sql`savepoint ${savepoint}`.execute(trx);
              try {
                outcomes.push({ ok: true, value: await item.work(trx) });
                await sql`release savepoint ${savepoint}`.execute(trx);
              } catch (error) {
                await sql`rollback to savepoint ${savepoint}`.execute(trx);
                await sql`release savepoint ${savepoint}`.execute(trx);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // The shared commit failed: nothing in this batch happened.
          for (const item of batch) item.reject(error);
          continue;
        }
        batch.forEach((item, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) item.resolve(outcome.value);
          else item.reject(outcome.error);
        });
      }
    } finally {
      this.running--;
    }
  }
}
