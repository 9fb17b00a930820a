import type { Kysely, Transaction } from 'kysely';
import { GroupCommit } from '../../db/group-commit.ts';
import type { Database, Task } from '../../db/types.ts';
import { enqueueMany } from '../../jobs/jobs.repo.ts';
import { debitMany, InsufficientFunds } from '../billing/ledger.ts';
import { insertTasks } from './tasks.repo.ts';
import { submitStatementFor } from './submit-statement.ts';

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

/** Group commit for submits (see db/group-commit.ts). */
export class SubmitBatcher extends GroupCommit<Task> {
  constructor(db: Kysely<Database>, parallel: number, committed?: (tasks: Task[]) => void) {
    super(db, parallel, writeSubmits, committed, submitStatementFor(db));
  }

  submit(task: Task): Promise<void> {
    return this.add(task);
  }
}
