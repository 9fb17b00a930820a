import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { enqueue } from '../src/jobs/jobs.repo.ts';
import { JobRunner, type JobOutcome } from '../src/jobs/runner.ts';
import { backendName, createTestApp } from './harness.ts';
import { waitUntil } from './support/receiver.ts';

// A job's backoff after a failure grows with the failures in a row, not with every run: a poll job
// of a long video runs dozens of times, and one failed poll after those must not wait the longest
// backoff (60 s) before the task is asked again.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe(`job backoff [${backendName}]`, () => {
  it('one failure after 12 ordinary runs is retried after the first backoff; failures in a row back off further', async () => {
    const t = await createTestApp({ WORKERS: '0' });
    cleanups.push(() => t.close());
    let runs = 0;
    const poll = async (): Promise<JobOutcome> => {
      runs++;
      if (runs === 13 || runs === 14) throw new Error(`upstream hiccup ${runs}`);
      return runs < 13 ? { retryAt: Date.now() } : { done: true };
    };
    const runner = new JobRunner(t.ctx.db, t.ctx.dialect, pino({ level: 'silent' }), { poll }, { concurrency: 1, pollMs: 10, leaseMs: 5000 });
    cleanups.push(() => runner.stop(1000));
    await enqueue(t.ctx.db, { kind: 'poll', taskId: 'task_backoff' });
    runner.start();
    const job = () => t.ctx.db.selectFrom('jobs').selectAll().where('task_id', '=', 'task_backoff').executeTakeFirstOrThrow();
    await waitUntil('the first failure', async () => (await job()).last_error === 'upstream hiccup 13', 10_000);
    const first = await job();
    // First failure in a row: 1 s (500 ms x 2); before, the 13th run's count gave the 60 s cap.
    expect(first.run_at - Date.now()).toBeLessThanOrEqual(1000);
    expect(first.attempts).toBe(1);
    await waitUntil('the second failure', async () => (await job()).last_error === 'upstream hiccup 14', 10_000);
    const second = await job();
    expect(second.attempts).toBe(2);
    expect(second.run_at - Date.now()).toBeGreaterThan(1000);
    expect(second.run_at - Date.now()).toBeLessThanOrEqual(2000);
    await runner.stop(1000);
  }, 30_000);
});
