import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeArkVideo, type FakeArkVideo } from './support/fake-ark-video.ts';

// Admission control: a channel's options.max_in_flight bounds what it holds at ModelArk; the rest
// wait here as `submitted` with progress 0 and go out in submit order as slots free up.

let fake: FakeArkVideo;
let t: TestApp;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeArkVideo({ queuedMs: 600_000, runningMs: 600_000 });
  t = await createTestApp({ UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', ADMISSION_RETRY_MS: '30', UPSTREAM_CALLBACKS: 'off' }, undefined, { workers: true });
  const channel = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: 'ark-50', type: 'ark', base_url: fake.url, secret: fake.apiKey, models: ['vidgen-2.0'], priority: 10, options: { max_in_flight: 50 } },
  });
  expect(channel.statusCode, channel.body).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const status = async (auth: Record<string, string>, id: string) => (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;

describe(`admission control [${backendName}]`, () => {
  it('holds the 51st task when the limit is 50 (submitted, progress 0) and sends it when one ends', async () => {
    const { auth } = await seedAccount(t.ctx, 1000);
    const ids: string[] = [];
    for (let i = 0; i < 51; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model: 'vidgen-2.0', prompt: `clip ${i}`, duration: 4, resolution: '480p' } });
      expect(res.statusCode).toBe(200);
      ids.push(res.json().data[0].task_id);
    }
    for (let i = 0; i < 400 && fake.tasks.size < 50; i++) await sleep(25);
    await sleep(300); // many admission retries of the 51st happen meanwhile
    expect(fake.tasks.size).toBe(50);
    // The first 50 in submit order went out; the last one waits.
    const sent = new Set([...fake.tasks.values()].map((task) => task.body.content[0].text));
    expect(sent.has('clip 50')).toBe(false);
    const waiting = await status(auth, ids[50]!);
    expect([waiting.status, waiting.progress]).toEqual(['submitted', 0]);

    const first = [...fake.tasks.values()].find((task) => task.body.content[0].text === 'clip 0')!;
    fake.finish(first.id, 'succeeded');
    for (let i = 0; i < 400 && fake.tasks.size < 51; i++) await sleep(25);
    expect(fake.tasks.size).toBe(51);
    expect((await status(auth, ids[0]!)).status).toBe('completed');
    // The fake counts the submit when it arrives; the task turns processing once its answer is written.
    for (let i = 0; i < 400 && (await status(auth, ids[50]!)).status === 'submitted'; i++) await sleep(25);
    expect((await status(auth, ids[50]!)).status).toBe('processing');
  });
});
