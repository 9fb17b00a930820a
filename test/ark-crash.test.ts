import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startFakeArkVideo, type FakeArkVideo } from './support/fake-ark-video.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';

// Crash tests of the ModelArk video path (issue 23): a worker process SIGKILLed while it downloads
// a finished video into our store, and while tasks wait for admission (max_in_flight). A second
// process takes over: every task ends once, is charged once, and its callback is delivered once.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Setup {
  api: TestApp;
  fake: FakeArkVideo;
  receiver: Receiver;
  workerEnv: Record<string, string>;
  auth: Record<string, string>;
}

async function setup(channelOptions: Record<string, unknown>, fakeTimes: { queuedMs: number; runningMs: number }): Promise<Setup> {
  const database = await freshDatabase();
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-ark-crash-'));
  // Our own address is not 127.0.0.1 here, so callbacks may go to the local receiver.
  const common = { PUBLIC_BASE_URL: 'http://gateway.test', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', UPSTREAM_CALLBACKS: 'off', FILES_DIR: filesDir };
  const api = await createTestApp({ WORKERS: '0', ...common }, database);
  const fake = await startFakeArkVideo(fakeTimes);
  const receiver = await startReceiver();
  cleanups.push(() => database.drop(), () => api.close(), () => fake.close(), () => receiver.close(), async () => fs.rmSync(filesDir, { recursive: true, force: true }));
  const channel = await api.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: 'modelark', type: 'ark', base_url: fake.url, secret: fake.apiKey, models: ['vidgen-2.0'], priority: 10, options: channelOptions },
  });
  expect(channel.statusCode, channel.body).toBe(201);
  const workerEnv = { ...database.env, ...common, WORKERS: '4', JOB_LEASE_MS: '1500', JOB_POLL_MS: '20', UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', ADMISSION_RETRY_MS: '50' };
  const account = await seedAccount(api.ctx, 100);
  return { api, fake, receiver, workerEnv, auth: account.auth };
}

async function submitVideos(s: Setup, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await s.api.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: s.auth, payload: { model: 'vidgen-2.0', prompt: `crash ${i}`, duration: 4, webhook: s.receiver.url } });
    expect(res.statusCode, res.body).toBe(200);
    ids.push(res.json().data[0].task_id);
  }
  return ids;
}

/** Every task ended, charged once (one hold, the ledger sums to its cost), one callback each. */
async function expectEachEndedOnce(s: Setup, ids: string[]) {
  await waitFor('every task to end', async () => {
    const open = await s.api.ctx.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', 'in', ['submitted', 'processing']).execute();
    return open.length === 0 ? true : undefined;
  });
  const tasks = await s.api.ctx.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
  expect(tasks.map((t) => t.status)).toEqual(ids.map(() => 'completed'));
  for (const task of tasks) {
    const rows = await s.api.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', task.id).execute();
    expect(rows.filter((r) => r.kind === 'hold')).toHaveLength(1);
    expect(-rows.reduce((sum, r) => sum + Number(r.balance_delta), 0)).toBe(task.cost);
    expect(Number(task.cost)).toBeGreaterThan(0);
  }
  expect(await auditLedger(s.api.ctx.db)).toEqual([]);
  await waitFor('one callback per task', () => (ids.every((id) => s.receiver.received.some((r) => JSON.parse(r.body).id === id)) ? true : undefined), 30_000);
  // Let any duplicate arrive before counting.
  await new Promise((r) => setTimeout(r, 500));
  for (const id of ids) {
    const mine = s.receiver.received.filter((r) => JSON.parse(r.body).id === id);
    expect(mine, id).toHaveLength(1);
    expect(JSON.parse(mine[0]!.body)).toMatchObject({ id, status: 'completed' });
  }
  return tasks;
}

describe(`ModelArk crash recovery [${backendName}]`, () => {
  it('SIGKILL while the finished video is being downloaded: the next process downloads it, completes each task once, charged once, one callback', async () => {
    const s = await setup({}, { queuedMs: 50, runningMs: 100 });
    s.fake.slowFileMs = 60_000;
    const first = await startGateway(s.workerEnv, 'src/cli.ts', ['worker']);
    const ids = await submitVideos(s, 3);
    await waitFor('a download in progress', () => (s.fake.downloads >= 1 ? true : undefined));
    expect(await first.stop('SIGKILL')).toBeNull();
    const open = await s.api.ctx.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', '=', 'processing').execute();
    expect(open.length).toBeGreaterThan(0);

    s.fake.slowFileMs = 0;
    await startGateway(s.workerEnv, 'src/cli.ts', ['worker']);
    const tasks = await expectEachEndedOnce(s, ids);
    // The stored video is whole: our link serves every byte the upstream had.
    for (const task of tasks) {
      const record = (await s.api.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: s.auth })).json().data;
      const link = new URL(record.result.videos[0].url[0]);
      const file = await s.api.app.inject({ method: 'GET', url: link.pathname + link.search });
      expect(file.statusCode).toBe(200);
      expect(file.rawPayload.length).toBe(2024);
    }
  }, 120_000);

  it('SIGKILL while tasks wait for admission: they keep their place, go out as slots free, each ends once, charged once, one callback', async () => {
    const s = await setup({ max_in_flight: 1 }, { queuedMs: 300, runningMs: 300 });
    const first = await startGateway(s.workerEnv, 'src/cli.ts', ['worker']);
    const ids = await submitVideos(s, 4);
    await waitFor('one task at ModelArk and the rest waiting', async () => {
      const rows = await s.api.ctx.db.selectFrom('tasks').select(['id', 'status', 'progress']).where('id', 'in', ids).execute();
      const processing = rows.filter((r) => r.status === 'processing').length;
      const waiting = rows.filter((r) => r.status === 'submitted' && r.progress === 0).length;
      return processing === 1 && waiting === 3 ? true : undefined;
    });
    expect(await first.stop('SIGKILL')).toBeNull();
    expect(s.fake.tasks.size).toBe(1);

    await startGateway(s.workerEnv, 'src/cli.ts', ['worker']);
    await expectEachEndedOnce(s, ids);
    // Never more than one at ModelArk, sent in submit order.
    expect(s.fake.tasks.size).toBe(4);
    const created = [...s.fake.tasks.values()].sort((a, b) => a.createdAt - b.createdAt);
    expect(created.map((t) => t.body.content[0].text)).toEqual(['crash 0', 'crash 1', 'crash 2', 'crash 3']);
    for (let i = 1; i < created.length; i++) expect(created[i]!.createdAt).toBeGreaterThanOrEqual(created[i - 1]!.createdAt + 600);
  }, 120_000);
});
