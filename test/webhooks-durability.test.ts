import { afterAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, freshDatabase, seedAccount } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { startReceiver, waitUntil } from './support/receiver.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe(`callback durability [${backendName}]`, () => {
  it('a process SIGKILLed while a retry is pending: after a restart the retry happens', async () => {
    const receiver = await startReceiver((_req, i) => (i === 0 ? 500 : 200));
    const database = await freshDatabase();
    const api = await createTestApp({ WORKERS: '0', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' }, database);
    cleanups.push(() => receiver.close(), () => database.drop(), () => api.close());
    const env = {
      ...database.env,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      WEBHOOK_RETRY_DELAYS: '2,2,2',
      SIMULATOR_LATENCY_MS: '50',
      JOB_POLL_MS: '50',
      // The receiver is on 127.0.0.1 too; the gateway's own host must be another name.
      PUBLIC_BASE_URL: 'http://gateway.test',
    };
    const first = await startGateway(env, 'src/cli.ts', ['worker']);

    const account = await seedAccount(api.ctx, 5);
    const res = await api.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { prompt: 'x', webhook: receiver.url } });
    const taskId = res.json().data[0].task_id;
    await waitUntil('the first, failing attempt', () => receiver.received.length === 1);
    await waitUntil('the retry to be scheduled', async () => {
      const job = await api.ctx.db.selectFrom('jobs').selectAll().where('task_id', '=', taskId).where('kind', '=', 'deliver').executeTakeFirst();
      return Boolean(job && job.lease_owner === null && job.run_at > Date.now());
    });
    expect(await first.stop('SIGKILL')).toBeNull();

    await startGateway(env, 'src/cli.ts', ['worker']);
    await waitUntil('the retry after the restart', () => receiver.received.length === 2, 30_000);
    expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({ id: taskId, status: 'completed' });
    // The attempt is recorded once the receiver's answer is back.
    const recorded = () => api.ctx.db.selectFrom('webhook_attempts').select('id').where('task_id', '=', taskId).execute();
    await waitUntil('the second attempt to be recorded', async () => (await recorded()).length === 2);
    const attempts = await api.ctx.db.selectFrom('webhook_attempts').select(['attempt', 'outcome']).where('task_id', '=', taskId).orderBy('id').execute();
    expect(attempts).toEqual([
      { attempt: 1, outcome: 'retry' },
      { attempt: 2, outcome: 'delivered' },
    ]);
  }, 90_000);
});
