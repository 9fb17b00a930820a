import type { Kysely, Transaction } from 'kysely';
import type { Database, Task } from '../../db/types.ts';
import { enqueueMany } from '../../jobs/jobs.repo.ts';
import { debitMany, InsufficientFunds } from '../billing/ledger.ts';
import { insertTasks } from './tasks.repo.ts';

/**
 * Writes submitted tasks: each hold is a conditional debit of its own; the tasks, their dispatch
 * jobs and their ledger rows are then written with one multi-row INSERT each, in the same
 * transaction. Returns, per task, undefined when it was written or why it was not.
 */
export async function writeSubmits(trx: Transaction<Database>, tasks: Task[]): Promise<(InsufficientFunds | undefined)[]> {
  const failures = await debitMany(
    trx,
    'hold',
    tasks.map((t) => ({ userId: t.user_id, keyId: t.key_id, keyLimited: t.key_limited === 1, amount: t.hold_amount, ref: t.id })),
  );
  const paid = tasks.filter((_, i) => !failures[i]);
  await insertTasks(trx, paid);
  await enqueueMany(trx, paid.map((t) => ({ kind: 'dispatch' as const, taskId: t.id, runAt: t.created_at })));
  return failures;
}

interface Pending {
  task: Task;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit for submits. Submits that arrive while a batch is being written wait and go
 * together into the next transaction, so a burst pays for one commit, not one each. A submit is
 * acknowledged only after its batch committed.
 */
export class SubmitBatcher {
  private queue: Pending[] = [];
  private running = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** SQLite has one writer: one batch at a time. Postgres can commit several in parallel. */
    private readonly parallel: number,
    /** Runs after each commit with the tasks it wrote. */
    private readonly committed: (tasks: Task[]) => void = () => {},
    private readonly maxBatch = 200,
  ) {}

  submit(task: Task): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      if (this.running < this.parallel) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        let failures: (InsufficientFunds | undefined)[];
        try {
          failures = await this.db.transaction().execute((trx) => writeSubmits(trx, batch.map((p) => p.task)));
        } catch (error) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        this.committed(batch.filter((_, i) => !failures[i]).map((p) => p.task));
        batch.forEach((pending, i) => (failures[i] ? pending.reject(failures[i]) : pending.resolve()));
      }
    } finally {
      this.running--;
    }
  }
}
