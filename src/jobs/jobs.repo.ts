import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../db/index.ts';
import type { Database, Job, JobKind } from '../db/types.ts';

type Executor = Kysely<Database> | Transaction<Database>;

// The jobs table is a transactional outbox: a job is inserted in the same transaction as the state
// change that causes it, and claimed with a lease so a crashed process's jobs are taken over later.

export async function enqueue(db: Executor, job: { kind: JobKind; taskId: string; runAt?: number }): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('jobs')
    .values({ kind: job.kind, task_id: job.taskId, run_at: job.runAt ?? now, attempts: 0, created_at: now })
    .execute();
}

export async function enqueueMany(db: Executor, jobs: { kind: JobKind; taskId: string; runAt: number }[]): Promise<void> {
  const now = Date.now();
  const rows = jobs.map((job) => ({ kind: job.kind, task_id: job.taskId, run_at: job.runAt, attempts: 0, created_at: now }));
  for (let i = 0; i < rows.length; i += 1000) await db.insertInto('jobs').values(rows.slice(i, i + 1000)).execute();
}

/** Leases up to `limit` due jobs to `owner`. On Postgres, SKIP LOCKED lets many claimers run at once. */
export async function claim(
  db: Kysely<Database>,
  dialect: Dialect,
  owner: string,
  limit: number,
  leaseMs: number,
  kinds?: { only: readonly JobKind[] } | { except: readonly JobKind[] },
): Promise<Job[]> {
  const now = Date.now();
  let due = db
    .selectFrom('jobs')
    .select('id')
    .where('run_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('run_at')
    .limit(limit);
  if (kinds && 'only' in kinds) due = due.where('kind', 'in', kinds.only);
  if (kinds && 'except' in kinds) due = due.where('kind', 'not in', kinds.except);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  return db
    .updateTable('jobs')
    .set((eb) => ({ lease_owner: owner, lease_until: now + leaseMs, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', due)
    .returningAll()
    .execute();
}

/**
 * Extends the leases of the jobs `owner` is running, in one statement. Only rows still leased to
 * `owner` are touched, so a job another process took over is never taken back. Returns the ids kept.
 */
export async function renew(db: Kysely<Database>, ids: number[], owner: string, leaseMs: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('jobs')
    .set({ lease_until: Date.now() + leaseMs })
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .returning('id')
    .execute();
  return rows.map((row) => Number(row.id));
}

/** Removes a finished job, only if this owner still holds its lease. */
export async function finish(db: Executor, id: number, owner: string): Promise<boolean> {
  const result = await db.deleteFrom('jobs').where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Puts a job back to run again at `runAt`, releasing the lease, only if this owner still holds it.
 * `attempts` counts failures in a row (the runner's backoff grows with it): a run that asked to be
 * run again without failing (a poll of an open task) starts the count again.
 */
export async function reschedule(db: Executor, id: number, owner: string, runAt: number, error?: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ run_at: runAt, lease_owner: null, lease_until: null, last_error: error ?? null, ...(error === undefined ? { attempts: 0 } : {}) })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** On a clean shutdown, hands every lease back so other processes need not wait for it to expire. */
export async function releaseAll(db: Kysely<Database>, owner: string): Promise<number> {
  const result = await db
    .updateTable('jobs')
    .set({ lease_owner: null, lease_until: null })
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function nextRunAt(db: Kysely<Database>): Promise<number | undefined> {
  const row = await db.selectFrom('jobs').select(sql<number>`min(run_at)`.as('next')).executeTakeFirst();
  return row?.next == null ? undefined : Number(row.next);
}
