import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeArkVideo, type FakeArkVideo } from './support/fake-ark-video.ts';

// Polling at scale on the ark channel (issue 23): polls of open video tasks go out as list calls
// filtered by task ids, and a channel's max_requests_per_second bounds every call to ModelArk.

let fake: FakeArkVideo;
let t: TestApp;
const TASKS = '/api/v3/contents/generations/tasks';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeArkVideo({ queuedMs: 300, runningMs: 900 });
  t = await createTestApp({ UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', UPSTREAM_CALLBACKS: 'off', WORKERS: '32', RESULT_FETCH_RETRY_DELAYS: '0' }, undefined, { workers: true });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function channel(name: string, models: string[], options: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name, type: 'ark', base_url: fake.url, secret: fake.apiKey, models, priority: 10, options } });
  expect(res.statusCode, res.body).toBe(201);
}

async function runTasks(model: string, n: number) {
  const { auth } = await seedAccount(t.ctx, 500);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model, prompt: `batch ${i}`, duration: 4 } });
    expect(res.statusCode, res.body).toBe(200);
    ids.push(res.json().data[0].task_id);
  }
  const until = Date.now() + 60_000;
  for (;;) {
    const rows = await t.ctx.db.selectFrom('tasks').select(['status', 'upstream_id']).where('id', 'in', ids).execute();
    if (rows.every((r) => r.status === 'completed' || r.status === 'failed') || Date.now() > until) return rows;
    await sleep(50);
  }
}

describe(`ark polling at scale [${backendName}]`, () => {
  it('polls of open tasks share list calls filtered by their task ids; every task still ends', async () => {
    await channel('batched', ['vidgen-2.0'], {});
    const from = fake.requests.length;
    const rows = await runTasks('vidgen-2.0', 20);
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'completed'));
    const ours = new Set(rows.map((r) => r.upstream_id!));
    const gets = fake.requests.slice(from).filter((r) => r.method === 'GET' && r.path.startsWith(TASKS));
    const lists = gets.filter((r) => r.path === TASKS);
    const singles = gets.filter((r) => r.path !== TASKS);
    expect(lists.length).toBeGreaterThan(0);
    const sizes = lists.map((r) => new URLSearchParams(r.query).getAll('filter.task_ids'));
    for (const ids of sizes) for (const id of ids) expect(ours.has(id)).toBe(true);
    expect(Math.max(...sizes.map((s) => s.length))).toBeGreaterThan(1);
    // Polls the list answered are not asked again one by one.
    expect(singles.length).toBeLessThan(lists.length);
    expect(sizes.reduce((n, s) => n + s.length, 0)).toBeGreaterThan(gets.length);
    // A loaded CI machine (the Postgres suite after the SQLite one) took more than the default 30 s.
  }, 90_000);

  it('max_requests_per_second: no second holds more calls to the channel than its limit', async () => {
    await channel('capped', ['vidgen-1-5-pro'], { max_requests_per_second: 4 });
    const from = fake.requests.length;
    const rows = await runTasks('vidgen-1-5-pro', 10);
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'completed'));
    const mine = fake.requests.slice(from).filter((r) => r.path.startsWith(TASKS)).map((r) => r.at);
    expect(mine.length).toBeGreaterThan(8);
    for (let i = 0; i < mine.length; i++) {
      const inWindow = mine.filter((at) => at >= mine[i]! && at < mine[i]! + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(4);
    }
  }, 90_000);
});
