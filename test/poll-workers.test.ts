import { afterAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startReceiver, waitUntil } from './support/receiver.ts';

// Polls have worker slots of their own (POLL_WORKERS). With one general slot (WORKERS=1) held by a
// callback delivery to a receiver that never answers, a task already handed to its upstream must
// still be polled to its ending; before, the poll waited for the one slot until the delivery timed out.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const ENV = {
  WORKERS: '1',
  POLL_WORKERS: '4',
  JOB_POLL_MS: '20',
  SIMULATOR_LATENCY_MS: '30',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOWED_PORTS: '*',
  PUBLIC_BASE_URL: 'http://gateway.test',
  // The hanging delivery holds its slot for the whole test.
  WEBHOOK_TIMEOUT: '60',
};

async function submit(t: TestApp, payload: Record<string, unknown>): Promise<string> {
  const account = await seedAccount(t.ctx, 5);
  const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id;
}

const statusOf = async (t: TestApp, id: string) =>
  (await t.ctx.db.selectFrom('tasks').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe(`poll workers [${backendName}]`, () => {
  it('a delivery holding the only general slot does not stop open tasks from being polled to their ending', async () => {
    const receiver = await startReceiver(() => 'hang');
    const database = await freshDatabase();
    const t = await createTestApp(ENV, database, { workers: true });
    cleanups.push(() => database.drop(), () => t.close(), () => receiver.close());

    const later = await submit(t, { prompt: 'ends after the delivery hangs [sim:delay=1.5]' });
    await waitUntil('the first task to be handed over', async () => (await statusOf(t, later)) === 'processing');
    const quick = await submit(t, { prompt: 'quick, with a callback', webhook: receiver.url });
    await waitUntil('the callback to be hanging', () => receiver.received.length === 1, 10_000);
    expect(await statusOf(t, quick)).toBe('completed');
    // The one general slot is held by the hanging delivery from here on.
    await waitUntil('the first task to complete by its polls', async () => (await statusOf(t, later)) === 'completed', 10_000);
    const deliveries = await t.ctx.db.selectFrom('jobs').select('kind').where('task_id', '=', quick).execute();
    expect(deliveries).toEqual([{ kind: 'deliver' }]);
  }, 30_000);
});
