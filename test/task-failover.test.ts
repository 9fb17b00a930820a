import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { findChannels } from '../src/modules/channels/channels.service.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeOpenAI, type FakeOpenAI, type Scripted } from './support/fake-openai.ts';
import { freePort } from './support/gateway-process.ts';

// Task failover: a submit that fails before the upstream accepted it (connection
// error, 429, 5xx) goes to the next channel by priority, as text calls do, and the task is charged once.

let first: FakeOpenAI;
let second: FakeOpenAI;
let t: TestApp;
let firstId: string;

beforeAll(async () => {
  [first, second] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  const port = await freePort();
  t = await createTestApp({ PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }, undefined, { workers: true });
  await t.app.listen({ port, host: '127.0.0.1' });
  // Only the two channels under test serve: nothing falls back to the built-in simulator.
  for (const channel of await findChannels(t.ctx.db)) await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
  const add = async (name: string, fake: FakeOpenAI, priority: number) => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name, type: 'openai', base_url: fake.url, secret: fake.key, models: ['imggen-2'], priority } });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  };
  firstId = await add('first', first, 20);
  await add('second', second, 10);
});
afterAll(async () => {
  await t.close();
  await Promise.all([first.close(), second.close()]);
});

async function submit(account: Awaited<ReturnType<typeof seedAccount>>) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'a fox', resolution: '2k' } });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id as string;
}

async function ended(account: Awaited<ReturnType<typeof seedAccount>>, id: string, withinMs = 10_000) {
  for (const until = Date.now() + withinMs; Date.now() < until; ) {
    const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    if (task.status === 'completed' || task.status === 'failed') return task;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`task ${id} did not end within ${withinMs} ms`);
}

const ledgerRows = (id: string) => t.ctx.db.selectFrom('ledger').selectAll().where('ref', '=', id).execute();
const health = async () => (await findChannels(t.ctx.db)).find((c) => c.id === firstId)!.health;

describe(`task failover [${backendName}]`, () => {
  const downs: [string, Scripted][] = [
    ['answers 503', { status: 503, error: { message: 'The engine is currently overloaded', type: 'server_error' } }],
    ['answers 429', { status: 429, error: { message: 'Rate limit reached for images per minute', type: 'requests', code: 'rate_limit_exceeded' } }],
    ['drops the connection', 'drop'],
  ];
  for (const [how, down] of downs) {
    it(`first channel ${how}, second up: the task completes on the second, its bytes served, charged once`, async () => {
      first.down = down;
      const account = await seedAccount(t.ctx, 5);
      const [tried, produced] = [first.requests.length, second.produced.length];
      const id = await submit(account);
      const task = await ended(account, id);
      first.down = undefined;
      expect(task.status).toBe('completed');
      expect(second.produced.length).toBe(produced + 1);
      const bytes = Buffer.from(await (await request(task.result.images[0].url[0])).body.arrayBuffer());
      expect(bytes.equals(second.produced.at(-1)!)).toBe(true);
      if (down !== 'drop') expect(first.requests.length).toBeGreaterThan(tried);
      // Charged once, the tier's price: one hold and no refund row.
      expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0.04);
      const row = await t.ctx.db.selectFrom('tasks').select(['cost', 'channel_id']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.cost).toBe(t.ctx.pricing.imageUnits('imggen-2', '2k', undefined, 1));
      expect(row.channel_id).not.toBe(firstId);
      expect(await auditLedger(t.ctx.db)).toEqual([]);
      // The failure is on the first channel's health, not as needing a new secret.
      expect(await health()).toMatchObject({ needs_attention: false, consecutive_failures: expect.any(Number), last_error: expect.any(String) });
      expect((await health()).consecutive_failures).toBeGreaterThan(0);
    });
  }

  it('every channel down: the task waits and retries (not failed, still held); when one comes back it completes, charged once', async () => {
    first.down = { status: 500 };
    second.down = { status: 502 };
    const account = await seedAccount(t.ctx, 5);
    const id = await submit(account);
    await new Promise((r) => setTimeout(r, 700));
    const waiting = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    expect(waiting.status).toBe('submitted');
    expect(second.requests.length).toBeGreaterThan(0);
    second.down = undefined;
    const task = await ended(account, id);
    first.down = undefined;
    expect(task.status).toBe('completed');
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0.04);
    expect((await ledgerRows(id)).length).toBe(1);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a refusal of the task itself (a 4xx) does not fail over: the task fails on the first channel, refunded', async () => {
    first.script.push({ status: 400, error: { message: "Invalid value: 'x'.", code: 'invalid_value' } });
    const before = second.requests.length;
    const account = await seedAccount(t.ctx, 5);
    const task = await ended(account, await submit(account));
    expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
    expect(second.requests.length).toBe(before);
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0);
    // An accepted submit on the first channel afterwards starts its failure count again.
    const ok = await ended(account, await submit(account));
    expect(ok.status).toBe('completed');
    expect(await health()).toMatchObject({ consecutive_failures: 0, needs_attention: false });
  });
});
