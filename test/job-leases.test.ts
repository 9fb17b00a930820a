import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/index.ts';
import { enqueue } from '../src/jobs/jobs.repo.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { startReceiver, waitUntil } from './support/receiver.ts';

// Job leases: a running job renews its lease, so a slow callback receiver or
// upstream is never called a second time while its first call is alive; a job whose process is gone
// is taken over once its lease runs out. Leases are shrunk to under a second here.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const LEASE = { JOB_LEASE_MS: '800', JOB_POLL_MS: '20', SIMULATOR_LATENCY_MS: '30' };
const CALLBACKS = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', PUBLIC_BASE_URL: 'http://gateway.test' };

interface Hit {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** A real local server whose answers `reply` decides, after as long as it likes. */
const PNG_BYTES = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 1)]);

async function startUpstream(reply: (hit: Hit, index: number) => Promise<{ status: number; json: unknown }>) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      const hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers };
      hits.push(hit);
      // Result files are real images: stored results are checked against the media they claim.
      if (hit.path.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_BYTES);
      const answer = await reply(hit, hits.length - 1);
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return { url, hits };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function twoRunners(env: Record<string, string>): Promise<[TestApp, TestApp]> {
  const database = await freshDatabase();
  const one = await createTestApp(env, database, { workers: true });
  const two = await createTestApp(env, database, { workers: true });
  cleanups.push(() => database.drop(), () => one.close(), () => two.close());
  return [one, two];
}

async function submit(t: TestApp, payload: Record<string, unknown>): Promise<string> {
  const account = await seedAccount(t.ctx, 5);
  const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id;
}

/** A logger whose lines the test reads, as an operator would. */
function capturingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
  return { lines, logger };
}

const jobsOf = (t: TestApp, taskId: string) => t.ctx.db.selectFrom('jobs').selectAll().where('task_id', '=', taskId).execute();

describe(`job leases [${backendName}]`, () => {
  it('a callback receiver slower than the lease, two runners on one database: the callback is POSTed once', async () => {
    const receiver = await startUpstream(async () => (await sleep(2500), { status: 200, json: { ok: true } }));
    const [one, two] = await twoRunners({ ...LEASE, ...CALLBACKS });
    const taskId = await submit(one, { prompt: 'slow receiver', webhook: receiver.url });

    await waitUntil('the callback to arrive', () => receiver.hits.length >= 1);
    await waitUntil('the delivery job to finish', async () => (await jobsOf(two, taskId)).length === 0, 10_000);
    // Two more leases' worth: a job that had been taken over would have been POSTed again by now.
    await sleep(1600);
    expect(receiver.hits).toHaveLength(1);
    const attempts = await two.ctx.db.selectFrom('webhook_attempts').select(['attempt', 'outcome']).where('task_id', '=', taskId).execute();
    expect(attempts).toEqual([{ attempt: 1, outcome: 'delivered' }]);
  }, 30_000);

  it('a relay upstream slower than the lease, two runners: the task is submitted upstream once', async () => {
    const upstream = await startUpstream(async (hit) => {
      if (hit.method === 'POST') return (await sleep(2500), { status: 200, json: { data: [{ task_id: 'up_slow' }] } });
      return { status: 200, json: { data: { status: 'completed', result: { images: [{ url: [`${upstream.url}/a.png`], expires_at: 9e9 }] } } } };
    });
    const [one, two] = await twoRunners({ ...LEASE, RELAY_POLL_MS: '50' });
    await addRelayChannel(one, upstream.url);
    two.ctx.channels.invalidate();
    const taskId = await submit(one, { model: 'imggen-2', prompt: 'slow upstream' });

    await waitUntil('the task to end', async () => (await taskStatus(two, taskId)) === 'completed', 15_000);
    expect(upstream.hits.filter((h) => h.method === 'POST')).toHaveLength(1);
  }, 30_000);

  it('a runner that dies mid-callback (its heartbeats stop) has its job taken over once the lease runs out', async () => {
    const receiver = await startReceiver((_req, i) => (i === 0 ? 'hang' : 200));
    const database = await freshDatabase();
    const env = { ...LEASE, ...CALLBACKS, WEBHOOK_TIMEOUT: '30' };
    const api = await createTestApp({ ...env, WORKERS: '0' }, database);
    cleanups.push(() => receiver.close(), () => database.drop(), () => api.close());
    const doomed = await startGateway({ ...database.env, ...env }, 'src/cli.ts', ['worker']);
    const taskId = await submit(api, { prompt: 'crash mid-callback', webhook: receiver.url });

    // startGateway does not wait for a worker to be ready: this wait includes its start (tsx compiling
    // the code base), which takes far longer on a loaded machine than the callback itself.
    await waitUntil('the first, hanging attempt', () => receiver.received.length === 1, 60_000);
    // Alive and renewing: three leases pass without the job being run again.
    await sleep(2400);
    expect(receiver.received).toHaveLength(1);
    expect(await doomed.stop('SIGKILL')).toBeNull();

    const heir = await createTestApp(env, database, { workers: true });
    cleanups.push(() => heir.close());
    await waitUntil('the taken-over attempt', () => receiver.received.length === 2, 10_000);
    expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({ id: taskId, status: 'completed' });
    await waitUntil('the delivery job to finish', async () => (await jobsOf(api, taskId)).length === 0, 10_000);
  }, 120_000);

  it('relay submits carry an Idempotency-Key derived from the task id, the same on a retried submit', async () => {
    const upstream = await startUpstream(async (hit, i) => {
      if (hit.method === 'POST') return i === 0 ? { status: 503, json: { error: { message: 'busy' } } } : { status: 200, json: { data: [{ task_id: 'up_1' }] } };
      return { status: 200, json: { data: { status: 'completed', result: { images: [{ url: [`${upstream.url}/b.png`], expires_at: 9e9 }] } } } };
    });
    const t = await createTestApp({ ...LEASE, RELAY_POLL_MS: '50' }, undefined, { workers: true });
    cleanups.push(() => t.close());
    await addRelayChannel(t, upstream.url);
    // The relay alone serves the model: with the simulator beside it, the 503 would fail over to it.
    await t.ctx.db.updateTable('channels').set({ status: 'disabled' }).where('type', '=', 'simulator').execute();
    t.ctx.channels.invalidate();
    const taskId = await submit(t, { model: 'imggen-2', prompt: 'retried submit' });

    await waitUntil('the task to end', async () => (await taskStatus(t, taskId)) === 'completed', 15_000);
    const submits = upstream.hits.filter((h) => h.method === 'POST');
    expect(submits).toHaveLength(2);
    expect(submits.map((h) => h.headers['idempotency-key'])).toEqual([taskId, taskId]);
    // Polls are reads: they carry no key.
    expect(upstream.hits.find((h) => h.method === 'GET')?.headers['idempotency-key']).toBeUndefined();
  }, 30_000);

  it('a job taken over by another process is not renewed back, and its first runner records no outcome', async () => {
    const t = await createTestApp({ WORKERS: '0' });
    cleanups.push(() => t.close());
    const { lines, logger } = capturingLogger();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runner = new JobRunner(t.ctx.db, t.ctx.dialect, logger, { deliver: async () => (await held, { done: true }) }, { concurrency: 1, pollMs: 20, leaseMs: 300 });
    cleanups.push(() => runner.stop(1000));
    await enqueue(t.ctx.db, { kind: 'deliver', taskId: 'task_taken_over' });
    runner.start();
    await waitUntil('the job to be claimed', async () => (await jobsOf(t, 'task_taken_over'))[0]?.lease_owner === runner.owner);
    // What another process's claim writes once it took the job over.
    const theirs = Date.now() + 60_000;
    await t.ctx.db.updateTable('jobs').set({ lease_owner: 'other-process', lease_until: theirs }).where('task_id', '=', 'task_taken_over').execute();
    await waitUntil('the lost lease to be noticed', () => lines.some((l) => l.includes('job lease lost')), 5000);
    release();
    await runner.stop(1000);
    expect(await jobsOf(t, 'task_taken_over')).toMatchObject([{ lease_owner: 'other-process', lease_until: theirs }]);
  }, 30_000);

  it('a lease renewal that fails (database gone) is logged and crashes nothing', async () => {
    const database = await freshDatabase();
    const t = await createTestApp({ WORKERS: '0' }, database);
    cleanups.push(() => database.drop(), () => t.close());
    const { lines, logger } = capturingLogger();
    const own = createDb(t.ctx.config.databaseUrl, { schema: database.schema });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runner = new JobRunner(own.db, own.dialect, logger, { deliver: async () => (await held, { done: true }) }, { concurrency: 1, pollMs: 20, leaseMs: 300 });
    await enqueue(t.ctx.db, { kind: 'deliver', taskId: 'task_lease_renewal' });
    runner.start();
    await waitUntil('the job to be claimed', async () => (await jobsOf(t, 'task_lease_renewal'))[0]?.lease_owner === runner.owner);
    await own.close();
    await waitUntil('the failed renewal to be logged', () => lines.some((l) => l.includes('renewing job leases failed')), 5000);
    release();
    await runner.stop(1000);
    await sleep(200);
    // Still here, and the job is still in the table for another process to take over.
    expect(await jobsOf(t, 'task_lease_renewal')).toHaveLength(1);
  }, 30_000);
});

async function addRelayChannel(t: TestApp, baseUrl: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: 'slow-upstream', type: 'relay', base_url: baseUrl, secret: 'sk-upstream', models: ['imggen-2'], priority: 10 },
  });
  expect(res.statusCode).toBe(201);
}

async function taskStatus(t: TestApp, taskId: string) {
  return (await t.ctx.db.selectFrom('tasks').select('status').where('id', '=', taskId).executeTakeFirst())?.status;
}
