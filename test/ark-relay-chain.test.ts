import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/index.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, freshDatabase, type TestDatabase } from './harness.ts';
import { startFakeArkVideo } from './support/fake-ark-video.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Issue 23: a chain gateway A -> gateway B -> ModelArk (the strict fake), two real processes. A's
// caller sees B's statuses and progress, A's own links to the fake's bytes, and every failure with
// the error code B gave it, refunded on both gateways.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function json(method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

async function bytesOf(url: string): Promise<Buffer> {
  const res = await request(url);
  expect(res.statusCode, url).toBe(200);
  return Buffer.from(await res.body.arrayBuffer());
}

async function database(): Promise<TestDatabase> {
  const db = await freshDatabase();
  cleanups.push(() => db.drop());
  return db;
}

/** Every (status, progress) a task showed at A until it ended, and its last record. */
async function watch(a: GatewayProcess, auth: Record<string, string>, taskId: string) {
  const seen: string[] = [];
  const deadline = Date.now() + 40_000;
  for (;;) {
    const record = (await json('GET', `${a.url}/v1/tasks/${taskId}`, auth)).body.data;
    const shown = `${record.status}/${record.progress}`;
    if (seen.at(-1) !== shown) seen.push(shown);
    if (record.status === 'completed' || record.status === 'failed') return { seen, record };
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not end: ${seen.join(' ')}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** B with an ark channel to the fake, A with a relay channel to B; A's caller and B's key for A. */
async function chain(fakeTimes: { queuedMs: number; runningMs: number }, keyAtB: Record<string, unknown> = {}) {
  const fake = await startFakeArkVideo(fakeTimes);
  cleanups.push(() => fake.close());
  const dbB = await database();
  const dbA = await database();
  const gatewayEnv = { ADMIN_TOKEN, JOB_POLL_MS: '20', UPSTREAM_CALLBACKS: 'off' };
  // READ_RATE_LIMIT_RPM 1: A's polls at B are limited by the key's own rate_limit_rpm, which a test lowers.
  const b = await startGateway({ ...dbB.env, ...gatewayEnv, READ_RATE_LIMIT_RPM: '1', UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', FILES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-chain-b-')) });
  const a = await startGateway({ ...dbA.env, ...gatewayEnv, RELAY_POLL_MS: '50', FILES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-chain-a-')) });
  const ark = await json('POST', `${b.url}/admin/channels`, adminHeaders, {
    name: 'modelark',
    type: 'ark',
    base_url: fake.url,
    secret: fake.apiKey,
    models: ['vidgen-2.0'],
    model_mapping: { 'vidgen-2.0': 'dreamina-seedance-2-0-260128' },
    priority: 10,
  });
  expect(ark.status, JSON.stringify(ark.body)).toBe(201);
  const userB = await json('POST', `${b.url}/admin/users`, adminHeaders, { name: 'gateway-a', balance: 100 });
  const keyB = await json('POST', `${b.url}/admin/keys`, adminHeaders, { user_id: userB.body.id, unlimited: true, ...keyAtB });
  const relay = await json('POST', `${a.url}/admin/channels`, adminHeaders, { name: 'gateway-b', type: 'relay', base_url: b.url, secret: keyB.body.key, models: ['vidgen-2.0'], priority: 10 });
  expect(relay.status, JSON.stringify(relay.body)).toBe(201);
  const userA = await json('POST', `${a.url}/admin/users`, adminHeaders, { name: 'caller', balance: 100 });
  const keyA = await json('POST', `${a.url}/admin/keys`, adminHeaders, { user_id: userA.body.id, unlimited: true });
  const auth = { authorization: `Bearer ${keyA.body.key}` };
  const submit = async (prompt: string, extra: Record<string, unknown> = {}) => {
    const res = await json('POST', `${a.url}/v1/videos/generations`, auth, { model: 'vidgen-2.0', prompt, duration: 4, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data[0].task_id as string;
  };
  return { fake, a, b, dbA, dbB, auth, keyB: { id: keyB.body.id as string, key: keyB.body.key as string }, submit };
}

describe(`gateway -> gateway -> ModelArk [${backendName}]`, () => {
  it('keeps every status, progress and error code; A links to its own copy of the bytes; failures are refunded on both', async () => {
    const { fake, a, b, dbA, dbB, auth, keyB: keyAtB, submit } = await chain({ queuedMs: 300, runningMs: 2500 });
    const keyB = { body: keyAtB };
    // Each way ModelArk can end a task, with the code B gives it and A must keep.
    const failures: [prompt: string, code: string][] = [
      ['[ark:fail=OutputVideoSensitiveContentDetected] a kite', 'content_policy_violation'],
      ['[ark:reject=InputTextSensitiveContentDetected] a kite', 'content_policy_violation'],
      ['[ark:expire] a kite', 'timeout'],
      ['[ark:fail=InternalServiceError] a kite', 'upstream_error'],
    ];
    const good = await submit('a red kite over the sea', { return_last_frame: true });
    const failing = await Promise.all(failures.map(([prompt]) => submit(prompt)));

    const done = await watch(a, auth, good);
    expect(done.record.status, JSON.stringify(done.record)).toBe('completed');
    // B's statuses reach A: processing with ModelArk's running progress (20 and up at B), then 100.
    const processing = done.seen.filter((s) => s.startsWith('processing/')).map((s) => Number(s.split('/')[1]));
    expect(processing.some((p) => p >= 20), done.seen.join(' ')).toBe(true);
    expect(done.seen.at(-1)).toBe('completed/100');
    const video = done.record.result.videos[0];
    expect(video).toMatchObject({ duration: 4, resolution: expect.any(String) });
    for (const link of [video.url[0], video.last_frame_url]) expect(link.startsWith(`${a.url}/files/`), link).toBe(true);
    const fakeTask = [...fake.tasks.values()].find((t) => /red kite/.test(JSON.stringify(t.body)))!;
    expect(fakeTask.body.model).toBe('dreamina-seedance-2-0-260128');
    expect((await bytesOf(video.url[0])).equals(await bytesOf(`${fake.url}/files/${fakeTask.id}.mp4`))).toBe(true);
    expect((await bytesOf(video.last_frame_url)).equals(await bytesOf(`${fake.url}/files/${fakeTask.id}.png`))).toBe(true);

    const ends = await Promise.all(failing.map((id) => watch(a, auth, id)));
    const storeA = createDb(dbA.url, { schema: dbA.schema });
    const storeB = createDb(dbB.url, { schema: dbB.schema });
    cleanups.push(() => storeA.close(), () => storeB.close());
    for (const [i, [prompt, code]] of failures.entries()) {
      const { record } = ends[i]!;
      expect([record.status, record.error?.code, record.cost ?? 0], `${prompt}: ${JSON.stringify(record)}`).toEqual(['failed', code, 0]);
      // The same ending at B, for A's account there.
      const upstream = await storeA.db.selectFrom('tasks').select('upstream_id').where('id', '=', failing[i]!).executeTakeFirstOrThrow();
      const atB = await json('GET', `${b.url}/v1/tasks/${upstream.upstream_id}`, { authorization: `Bearer ${keyB.body.key}` });
      expect([atB.body.data.status, atB.body.data.error?.code], prompt).toEqual(['failed', code]);
    }
    // Refunded on both: each failed task's ledger rows sum to nothing; only the success is paid.
    for (const [store, ids] of [
      [storeA, [good, ...failing]],
      [storeB, await Promise.all([good, ...failing].map(async (id) => (await storeA.db.selectFrom('tasks').select('upstream_id').where('id', '=', id).executeTakeFirstOrThrow()).upstream_id!))],
    ] as const) {
      const rows = await store.db.selectFrom('ledger').select(['ref', 'kind', 'balance_delta']).where('ref', 'in', ids).execute();
      const sums = ids.map((id) => rows.filter((r) => r.ref === id).reduce((s, r) => s + Number(r.balance_delta), 0));
      expect(sums[0]).toBeLessThan(0);
      expect(sums.slice(1)).toEqual(failing.map(() => 0));
      for (const id of ids.slice(1)) expect(rows.filter((r) => r.ref === id && r.kind === 'hold'), id).toHaveLength(1);
    }
    const paidA = await json('GET', `${a.url}/v1/user/balance`, auth);
    expect(paidA.body.used_balance).toBeCloseTo(done.record.cost);
  }, 90_000);

  it("B's rate limit (429) on A's polls keeps the task open at A until B answers again; it completes once, charged once", async () => {
    // A's key at B allows 3 calls a minute: the submit and two polls, then B answers 429.
    const { a, b, auth, keyB, submit } = await chain({ queuedMs: 100, runningMs: 300 }, { rate_limit_rpm: 3 });
    const id = await submit('a slow kite');
    const limited = await (async () => {
      for (let i = 0; i < 100; i++) {
        const res = await request(`${b.url}/v1/tasks/none`, { headers: { authorization: `Bearer ${keyB.key}` } });
        await res.body.dump();
        if (res.statusCode === 429) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    })();
    expect(limited).toBe(true);
    // A keeps asking while B refuses: the task stays open at A (before: failed with upstream_error).
    // (B's one-minute window may also roll over meanwhile, and the task complete early.)
    await new Promise((r) => setTimeout(r, 1500));
    const during = (await json('GET', `${a.url}/v1/tasks/${id}`, auth)).body.data;
    expect(['processing', 'completed'], JSON.stringify(during)).toContain(during.status);
    const lifted = await json('PATCH', `${b.url}/admin/keys/${keyB.id}`, adminHeaders, { rate_limit_rpm: 100_000 });
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    const { record } = await watch(a, auth, id);
    expect(record.status, JSON.stringify(record)).toBe('completed');
    expect(record.result.videos[0].url[0].startsWith(`${a.url}/files/`)).toBe(true);
    const paid = await json('GET', `${a.url}/v1/user/balance`, auth);
    expect(paid.body.used_balance).toBeCloseTo(record.cost);
  }, 90_000);
});
