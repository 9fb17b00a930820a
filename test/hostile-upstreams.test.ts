import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { sendEndlessJson, type EndlessCount } from './support/endless-answer.ts';
import { startFakeTaskUpstream, type FakeTaskUpstream } from './support/fake-task-upstream.ts';

// Upstreams that attack the gateway: an answer that never ends (OpenAI images, ModelArk video, a
// relay's task record) is cut off at the configured cap, its task failing and refunded, the process's memory
// flat; and a relay's upstream shows nothing of itself (host, links, extra fields) to our caller.

const MAX_ANSWER = 8 * 1024 * 1024;
const MiB = 1024 * 1024;
const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).png().toBuffer();

let relayUpstream: FakeTaskUpstream;
let openai: { url: string; endless: EndlessCount; close(): Promise<void> };
let t: TestApp;

async function startEndlessOpenAI() {
  const endless: EndlessCount = { sent: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method === 'POST' && req.url === '/v1/images/generations') return sendEndlessJson(res, '{"created":1,"data":[{"b64_json":"', '"}]}', endless);
    // ModelArk's video API on the same host.
    if (req.method === 'POST' && req.url === '/api/v3/contents/generations/tasks') return sendEndlessJson(res, '{"id":"cgt-1","note":"', '"}', endless);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, endless, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

async function addChannel(payload: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: `ch-${Math.random().toString(36).slice(2, 8)}`, priority: 10, ...payload } });
  expect(res.statusCode).toBe(201);
}

type Account = Awaited<ReturnType<typeof seedAccount>>;

async function run(account: Account, model: string) {
  const [url, payload] = model.startsWith('vid') ? ['/v1/videos/generations', { model, prompt: 'a harbour' }] : ['/v1/images/generations', { model, prompt: 'a harbour', size: '1:1' }];
  const submit = await t.app.inject({ method: 'POST', url, headers: account.auth, payload });
  expect(submit.statusCode).toBe(200);
  const id = submit.json().data[0].task_id;
  for (let i = 0; i < 2400; i++) {
    const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    if (task.status === 'completed' || task.status === 'failed') return task;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('task did not end');
}

const used = async (account: Account) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance;

beforeAll(async () => {
  relayUpstream = await startFakeTaskUpstream({ bytes: png, contentType: 'image/png' });
  openai = await startEndlessOpenAI();
  t = await createTestApp({ UPSTREAM_MAX_ANSWER_BYTES: String(MAX_ANSWER), RELAY_POLL_MS: '20', RESULT_FETCH_RETRY_DELAYS: '0.05', TASK_DEADLINE_IMAGE_S: '60' }, undefined, { workers: true });
  await addChannel({ type: 'openai', base_url: openai.url, secret: 'sk-endless', models: ['imggen-2-official'] });
  await addChannel({ type: 'relay', base_url: relayUpstream.url, secret: 'sk-up', models: ['imggen-2'] });
  await addChannel({ type: 'ark', base_url: openai.url, secret: 'ark-endless', models: ['vidgen-2.0'] });
});
afterAll(async () => {
  await t?.close();
  await openai?.close();
  await relayUpstream?.close();
});

describe(`an upstream answer that never ends is cut off at UPSTREAM_MAX_ANSWER_BYTES [${backendName}]`, () => {
  it('OpenAI images: the task fails with upstream_error, refunded; the memory stays flat', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = process.memoryUsage().rss;
    const task = await run(account, 'imggen-2-official');
    const grown = process.memoryUsage().rss - before;
    expect([task.status, task.error?.code]).toEqual(['failed', 'upstream_error']);
    expect(task.error.message).toMatch(/answer was over 8388608 bytes/);
    expect(grown).toBeLessThan(150 * MiB);
    // Cut off near the cap, not read to the sender's end (400 MiB).
    expect(openai.endless.sent).toBeLessThan(100 * MiB);
    expect(await used(account)).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('ModelArk video: the task fails with upstream_error, refunded; the memory stays flat', async () => {
    const account = await seedAccount(t.ctx, 50);
    const sentBefore = openai.endless.sent;
    const before = process.memoryUsage().rss;
    const task = await run(account, 'vidgen-2.0');
    const grown = process.memoryUsage().rss - before;
    expect([task.status, task.error?.code]).toEqual(['failed', 'upstream_error']);
    expect(task.error.message).toMatch(/answer was over 8388608 bytes/);
    expect(grown).toBeLessThan(150 * MiB);
    expect(openai.endless.sent - sentBefore).toBeLessThan(100 * MiB);
    expect(await used(account)).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("a relay's task record: the task fails with upstream_error, refunded; the memory stays flat", async () => {
    relayUpstream.record = 'endless';
    try {
      const account = await seedAccount(t.ctx, 5);
      const before = process.memoryUsage().rss;
      const task = await run(account, 'imggen-2');
      const grown = process.memoryUsage().rss - before;
      expect([task.status, task.error?.code]).toEqual(['failed', 'upstream_error']);
      expect(grown).toBeLessThan(150 * MiB);
      expect(relayUpstream.endless.sent).toBeLessThan(100 * MiB);
      expect(await used(account)).toBe(0);
      expect(await auditLedger(t.ctx.db)).toEqual([]);
    } finally {
      relayUpstream.record = 'completed';
    }
  });
});

describe(`a relay shows nothing of its upstream [${backendName}]`, () => {
  const theirs = () => [relayUpstream.url, new URL(relayUpstream.url).host, 'upstream-private', '/file/'];

  it('a failed relayed task: a neutral error, no result; nothing names the upstream host or its link', async () => {
    relayUpstream.record = 'failed';
    try {
      const account = await seedAccount(t.ctx, 5);
      const task = await run(account, 'imggen-2');
      expect(task.status).toBe('failed');
      expect(task.error).toEqual({ code: 'upstream_error', message: expect.any(String) });
      expect(task.result).toBeUndefined();
      const shown = JSON.stringify(task);
      for (const secret of theirs()) expect(shown).not.toContain(secret);
      expect(await used(account)).toBe(0);
    } finally {
      relayUpstream.record = 'completed';
    }
  });

  it('a completed relayed task: its files re-hosted, its extra fields (links, ids) dropped', async () => {
    relayUpstream.extra = {
      result: { debug_url: `${relayUpstream.url}/debug/1`, upstream_task: 'up_1', images_raw: [`${relayUpstream.url}/raw`] },
      group: { source: `${relayUpstream.url}/raw/1.png?signature=upstream-private`, origin_host: new URL(relayUpstream.url).host },
    };
    try {
      const account = await seedAccount(t.ctx, 5);
      const task = await run(account, 'imggen-2');
      expect(task.status).toBe('completed');
      expect(Object.keys(task.result)).toEqual(['images']);
      expect(Object.keys(task.result.images[0]).sort()).toEqual(['expires_at', 'url']);
      expect(task.result.images[0].url[0]).toContain('/files/');
      const shown = JSON.stringify(task);
      for (const secret of theirs()) expect(shown).not.toContain(secret);
      const link = new URL(task.result.images[0].url[0]);
      const file = await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
      expect(file.rawPayload.equals(png)).toBe(true);
    } finally {
      relayUpstream.extra = {};
    }
  });
});
