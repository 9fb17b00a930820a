import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startFakeTaskUpstream, type FakeTaskUpstream } from './support/fake-task-upstream.ts';
import { freePort } from './support/gateway-process.ts';

// The results step: a relay channel's upstream answers with its own file link, and the gateway
// downloads it into its store before the task completes. The upstream file misbehaves on purpose.

const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).png().toBuffer();
let upstream: FakeTaskUpstream;
const apps: TestApp[] = [];
beforeAll(async () => {
  upstream = await startFakeTaskUpstream({ bytes: png });
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await upstream.close();
});

async function gateway(env: Record<string, string> = {}, database?: Awaited<ReturnType<typeof freshDatabase>>) {
  const port = await freePort();
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-results-'));
  const t = await createTestApp(
    { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, FILES_DIR: filesDir, RELAY_POLL_MS: '20', RESULT_FETCH_RETRY_DELAYS: '0.05,0.05', ...env },
    database,
    { workers: true },
  );
  apps.push(t);
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base: `http://127.0.0.1:${port}`, filesDir };
}

async function relayChannel(t: TestApp) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: `up-${randomBytes(3).toString('hex')}`, type: 'relay', base_url: upstream.url, secret: 'sk-up', models: ['imggen-2'], priority: 10 },
  });
  expect(res.statusCode).toBe(201);
}

async function runTask(t: TestApp, account: Awaited<ReturnType<typeof seedAccount>>) {
  const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'x', size: '4:3' } });
  expect(submit.statusCode).toBe(200);
  const id = submit.json().data[0].task_id;
  for (let i = 0; i < 400; i++) {
    const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    if (task.status === 'completed' || task.status === 'failed') return task;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('task did not end');
}

const usedBalance = async (t: TestApp, account: Awaited<ReturnType<typeof seedAccount>>) =>
  (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance;

describe(`result files from an upstream URL [${backendName}]`, () => {
  let g: Awaited<ReturnType<typeof gateway>>;
  beforeAll(async () => {
    g = await gateway({ RESULT_MAX_BYTES: '100000' });
    await relayChannel(g.t);
  });

  it('the link is ours, the bytes are the upstream file, the type comes from the bytes (not the upstream header)', async () => {
    upstream.file = { bytes: png, contentType: 'text/plain' };
    const task = await runTask(g.t, await seedAccount(g.t.ctx, 5));
    expect(task.status).toBe('completed');
    const link: string = task.result.images[0].url[0];
    expect(link.startsWith(`${g.base}/files/`)).toBe(true);
    expect(link).toMatch(/\.png$/);
    expect(task.result.images[0].expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000) + 23 * 3600);
    const res = await request(link);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/png']);
    expect(Buffer.from(await res.body.arrayBuffer()).equals(png)).toBe(true);
  });

  it('5xx answers are retried: the third download is stored', async () => {
    const before = upstream.downloads;
    upstream.file = { bytes: png, failFirst: before + 2 };
    const task = await runTask(g.t, await seedAccount(g.t.ctx, 5));
    expect(task.status).toBe('completed');
    expect(upstream.downloads - before).toBe(3);
  });

  it('a download that fails after its retries fails the task with upstream_error and refunds it', async () => {
    upstream.file = { bytes: png, failFirst: Number.MAX_SAFE_INTEGER };
    const account = await seedAccount(g.t.ctx, 5);
    const task = await runTask(g.t, account);
    expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
    expect(await usedBalance(g.t, account)).toBe(0);
  });

  it('a file over RESULT_MAX_BYTES fails the task, refunded, and nothing is stored', async () => {
    upstream.file = { bytes: Buffer.concat([png, randomBytes(200_000)]) };
    const account = await seedAccount(g.t.ctx, 5);
    const stored = fs.readdirSync(g.filesDir).filter((f) => !f.startsWith('.'));
    const task = await runTask(g.t, account);
    expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
    expect(task.error.message).toContain('larger than 100000 bytes');
    expect(await usedBalance(g.t, account)).toBe(0);
    expect(fs.readdirSync(g.filesDir).filter((f) => !f.startsWith('.'))).toEqual(stored);
    expect(fs.readdirSync(path.join(g.filesDir, '.partial'))).toEqual([]);
  });
});

describe(`a slow upstream download [${backendName}]`, () => {
  it('taking longer than the job lease, with two processes running workers, is downloaded and stored once', async () => {
    const database = await freshDatabase();
    const env = { JOB_LEASE_MS: '300', JOB_POLL_MS: '20' };
    const one = await gateway(env, database);
    await relayChannel(one.t);
    const two = await gateway({ ...env, FILES_DIR: one.filesDir }, database);
    upstream.file = { bytes: png, slowMs: 1500 };
    const before = upstream.downloads;
    const account = await seedAccount(one.t.ctx, 5);
    const task = await runTask(one.t, account);
    expect(task.status).toBe('completed');
    expect(upstream.downloads - before).toBe(1);
    const stored = fs.readdirSync(one.filesDir).filter((f) => f.includes(task.id));
    expect(stored).toHaveLength(1);
    const res = await request(task.result.images[0].url[0].replace(one.base, two.base));
    expect(Buffer.from(await res.body.arrayBuffer()).equals(png)).toBe(true);
    await database.drop();
  }, 30_000);
});
