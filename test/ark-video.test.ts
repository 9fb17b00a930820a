import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeArkVideo, type FakeArkVideo } from './support/fake-ark-video.ts';
import { freePort } from './support/gateway-process.ts';

// The ark channel's video tasks against a strict local ModelArk (test/support/fake-ark-video.ts).

let fake: FakeArkVideo;
let t: TestApp;
let base: string;
const logs: any[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeArkVideo({ queuedMs: 150, runningMs: 250 });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (logs.push(JSON.parse(String(chunk))), done()) }));
  t = await createTestApp(
    { UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', TASK_DEADLINE_VIDEO_S: '600', PUBLIC_BASE_URL: base, UPSTREAM_CALLBACKS: 'off', RESULT_FETCH_RETRY_DELAYS: '0' },
    undefined,
    { workers: true, logger },
  );
  await t.app.listen({ port, host: '127.0.0.1' });
  const channel = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: {
      name: 'modelark',
      type: 'ark',
      base_url: fake.url,
      secret: fake.apiKey,
      models: ['vidgen-2.0', 'vidgen-1-5-pro', 'vidgen-1-0-pro-quality'],
      model_mapping: { 'vidgen-2.0': 'dreamina-seedance-2-0-260128', 'vidgen-1-5-pro': 'seedance-1-5-pro-251215', 'vidgen-1-0-pro-quality': 'seedance-1-0-pro-250528' },
      priority: 10,
    },
  });
  expect(channel.statusCode).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function submit(auth: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data[0].task_id;
}

async function record(auth: Record<string, string>, id: string) {
  return (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
}

async function ended(auth: Record<string, string>, id: string, timeoutMs = 8000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const data = await record(auth, id);
    if (data.status === 'completed' || data.status === 'failed' || Date.now() > until) return data;
    await sleep(25);
  }
}

const upstreamBody = async (id: string) => {
  const row = await t.ctx.db.selectFrom('tasks').select('upstream_id').where('id', '=', id).executeTakeFirstOrThrow();
  return fake.tasks.get(row.upstream_id!)!.body;
};

describe(`ark video tasks [${backendName}]`, () => {
  it('maps every field of vidgen-2.0 to ModelArk content[] and top-level fields', async () => {
    const { auth } = await seedAccount(t.ctx, 50);
    const id = await submit(auth, {
      model: 'vidgen-2.0',
      prompt: 'a lighthouse at dusk',
      duration: 8,
      size: '9:16',
      resolution: '1080p',
      seed: 42,
      generate_audio: false,
      return_last_frame: true,
      tools: [{ type: 'web_search' }],
      image_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png'],
      video_urls: ['https://cdn.example.com/v.mp4'],
      audio_urls: ['https://cdn.example.com/s.mp3'],
    });
    await ended(auth, id);
    expect(await upstreamBody(id)).toEqual({
      model: 'dreamina-seedance-2-0-260128',
      content: [
        { type: 'text', text: 'a lighthouse at dusk' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/a.png' }, role: 'reference_image' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/b.png' }, role: 'reference_image' },
        { type: 'video_url', video_url: { url: 'https://cdn.example.com/v.mp4' }, role: 'reference_video' },
        { type: 'audio_url', audio_url: { url: 'https://cdn.example.com/s.mp3' }, role: 'reference_audio' },
      ],
      ratio: '9:16',
      resolution: '1080p',
      duration: 8,
      seed: 42,
      generate_audio: false,
      return_last_frame: true,
      watermark: false,
      tools: [{ type: 'web_search' }],
    });
  });

  it('maps 4.5.2 (aspect_ratio, camerafixed, audio, two image_urls as first + last frame) and 4.5.3 (image_with_roles, no audio field)', async () => {
    const { auth } = await seedAccount(t.ctx, 50);
    const pro = await submit(auth, {
      model: 'vidgen-1-5-pro',
      prompt: 'a fox runs',
      aspect_ratio: '4:3',
      resolution: '480p',
      duration: 6,
      seed: -1,
      audio: false,
      camerafixed: true,
      image_urls: ['https://cdn.example.com/first.png', 'https://cdn.example.com/last.png'],
    });
    const quality = await submit(auth, {
      model: 'vidgen-1-0-pro-quality',
      prompt: 'waves',
      duration: 2,
      image_with_roles: [
        { url: 'https://cdn.example.com/f.png', role: 'first_frame' },
        { url: 'https://cdn.example.com/l.png', role: 'last_frame' },
      ],
    });
    await ended(auth, pro);
    await ended(auth, quality);
    expect(await upstreamBody(pro)).toEqual({
      model: 'seedance-1-5-pro-251215',
      content: [
        { type: 'text', text: 'a fox runs' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/first.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/last.png' }, role: 'last_frame' },
      ],
      ratio: '4:3',
      resolution: '480p',
      duration: 6,
      seed: -1,
      camera_fixed: true,
      generate_audio: false,
      return_last_frame: false,
      watermark: false,
    });
    expect(await upstreamBody(quality)).toEqual({
      model: 'seedance-1-0-pro-250528',
      content: [
        { type: 'text', text: 'waves' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/f.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/l.png' }, role: 'last_frame' },
      ],
      ratio: '16:9',
      resolution: '1080p',
      duration: 2,
      return_last_frame: false,
      watermark: false,
    });
  });

  it('queued and running are processing with progress; succeeded stores video_url and last_frame_url as our links and charges the hold', async () => {
    const { auth, user } = await seedAccount(t.ctx, 50);
    const id = await submit(auth, { model: 'vidgen-2.0', prompt: 'a red kite', return_last_frame: true });
    const seen = new Map<string, number>();
    let data: any;
    const until = Date.now() + 8000;
    do {
      data = await record(auth, id);
      seen.set(data.status, Math.max(seen.get(data.status) ?? 0, data.progress));
      await sleep(20);
    } while (data.status !== 'completed' && data.status !== 'failed' && Date.now() < until);
    expect(data.status).toBe('completed');
    expect(seen.get('processing')).toBeGreaterThanOrEqual(10);
    expect(seen.get('processing')).toBeLessThan(100);
    const video = data.result.videos[0];
    expect(video.url[0].startsWith(`${base}/files/`)).toBe(true);
    expect(video.last_frame_url.startsWith(`${base}/files/`)).toBe(true);
    expect(video).toMatchObject({ duration: 5, resolution: '720p' });
    const upstream = [...fake.tasks.values()].find((task) => task.body.content[0].text === 'a red kite')!;
    const theirs = Buffer.from(await (await request(`${fake.url}/files/${upstream.id}.mp4`)).body.arrayBuffer());
    const ours = Buffer.from(await (await request(video.url[0])).body.arrayBuffer());
    expect(ours.equals(theirs)).toBe(true);
    const row = await t.ctx.db.selectFrom('tasks').select(['cost', 'hold_amount']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(Number(row.cost)).toBe(Number(row.hold_amount));
    expect(Number(row.cost)).toBeGreaterThan(0);
    const balance = await t.ctx.db.selectFrom('users').select('balance').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(Number(balance.balance)).toBe(50_000_000 - Number(row.cost));
  });

  it.each([
    ['failed with a sensitive-content code', 'a cat [ark:fail=OutputVideoSensitiveContentDetected]', 'content_policy_violation'],
    ['failed with another code', 'a dog [ark:fail=InternalServiceError]', 'upstream_error'],
    ['expired', 'an owl [ark:expire]', 'timeout'],
    ['a create refused for sensitive input', 'a bat [ark:reject=InputTextSensitiveContentDetected]', 'content_policy_violation'],
    ['a create refused as invalid', 'a rat [ark:reject=InvalidParameter]', 'upstream_error'],
  ])('%s: failed with the mapped code, refunded in full', async (_name, prompt, code) => {
    const { auth, user } = await seedAccount(t.ctx, 50);
    const id = await submit(auth, { model: 'vidgen-2.0', prompt });
    const data = await ended(auth, id);
    expect(data.status).toBe('failed');
    expect(data.error.code).toBe(code);
    expect(data.cost).toBe(0);
    const balance = await t.ctx.db.selectFrom('users').select('balance').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(Number(balance.balance)).toBe(50_000_000);
  });

  it('cancelled at ModelArk: failed upstream_error and refunded', async () => {
    const { auth } = await seedAccount(t.ctx, 50);
    const id = await submit(auth, { model: 'vidgen-2.0', prompt: 'a swan' });
    let upstreamId: string | null = null;
    for (let i = 0; i < 200 && !upstreamId; i++) {
      upstreamId = (await t.ctx.db.selectFrom('tasks').select('upstream_id').where('id', '=', id).executeTakeFirstOrThrow()).upstream_id;
      await sleep(10);
    }
    fake.finish(upstreamId!, 'cancelled');
    const data = await ended(auth, id);
    expect([data.status, data.error.code, data.cost]).toEqual(['failed', 'upstream_error', 0]);
    expect(data.error.message).toContain('cancelled');
  });

  it("a wrong API key fails the task (refunded) without naming the key", async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/admin/channels',
      headers: adminHeaders,
      payload: { name: 'bad-key', type: 'ark', base_url: fake.url, secret: 'wrong-key', models: ['vidgen-2.0-fast'], priority: 10 },
    });
    expect(created.statusCode).toBe(201);
    const { auth } = await seedAccount(t.ctx, 50);
    const id = await submit(auth, { model: 'vidgen-2.0-fast', prompt: 'a hare' });
    const data = await ended(auth, id);
    expect([data.status, data.error.code, data.cost]).toEqual(['failed', 'upstream_error', 0]);
    expect(data.error.message).not.toContain('wrong-key');
  });
});

// Deadlines: a second gateway whose video deadline is 1 s, against a fake that is slow to start.
describe(`ark video deadlines [${backendName}]`, () => {
  let slow: FakeArkVideo;
  let d: TestApp;
  const lines: any[] = [];
  beforeAll(async () => {
    slow = await startFakeArkVideo({ queuedMs: 60_000, runningMs: 60_000 });
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    d = await createTestApp({ UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', TASK_DEADLINE_VIDEO_S: '1', UPSTREAM_CALLBACKS: 'off' }, undefined, { workers: true, logger });
    const channel = await d.app.inject({
      method: 'POST',
      url: '/admin/channels',
      headers: adminHeaders,
      payload: { name: 'slow-ark', type: 'ark', base_url: slow.url, secret: slow.apiKey, models: ['vidgen-2.0'], priority: 10 },
    });
    expect(channel.statusCode).toBe(201);
  });
  afterAll(async () => {
    await d?.close();
    await slow?.close();
  });

  const deadlineEnd = async (prompt: string) => {
    const { auth } = await seedAccount(d.ctx, 50);
    const res = await d.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model: 'vidgen-2.0', prompt } });
    const id = res.json().data[0].task_id;
    let data: any;
    for (let i = 0; i < 200; i++) {
      data = (await d.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
      if (data.status === 'failed' || data.status === 'completed') break;
      await sleep(25);
    }
    const upstreamId = (await d.ctx.db.selectFrom('tasks').select('upstream_id').where('id', '=', id).executeTakeFirstOrThrow()).upstream_id!;
    return { id, data, upstreamId, auth };
  };

  it('a task failed by its deadline is cancelled at ModelArk (DELETE while queued)', async () => {
    const { data, upstreamId } = await deadlineEnd('a slow glacier');
    expect([data.status, data.error.code, data.cost]).toEqual(['failed', 'timeout', 0]);
    for (let i = 0; i < 100 && slow.tasks.get(upstreamId)?.forced !== 'cancelled'; i++) await sleep(25);
    expect(slow.tasks.get(upstreamId)?.forced).toBe('cancelled');
    expect(slow.requests.some((r) => r.method === 'DELETE' && r.path.endsWith(upstreamId))).toBe(true);
  });

  it('a running task cannot be cancelled: its later success changes nothing here and is logged', async () => {
    slow.queuedMs = 0;
    try {
      const { id, data, upstreamId, auth } = await deadlineEnd('a running comet');
      expect([data.status, data.error.code]).toEqual(['failed', 'timeout']);
      // ModelArk refused the DELETE of the running task; then it succeeds there.
      slow.finish(upstreamId, 'succeeded');
      for (let i = 0; i < 200 && !lines.some((l) => l.task === id && /already ended here/.test(l.msg)); i++) await sleep(25);
      const late = lines.find((l) => l.task === id && /already ended here/.test(l.msg));
      expect(late).toMatchObject({ level: 40, upstreamStatus: 'succeeded' });
      const after = (await d.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
      expect([after.status, after.error.code, after.cost]).toEqual(['failed', 'timeout', 0]);
      expect(after.result).toBeUndefined();
    } finally {
      slow.queuedMs = 60_000;
    }
  });
});

// Upstream callbacks: polling is slowed to 10 minutes, so only a callback can make a task end soon.
describe(`ark upstream callbacks [${backendName}]`, () => {
  let cb: FakeArkVideo;
  let c: TestApp;
  let origin: string;
  beforeAll(async () => {
    cb = await startFakeArkVideo({ queuedMs: 100, runningMs: 200 });
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    c = await createTestApp(
      { UPSTREAM_POLL_MS: '600000', UPSTREAM_MAX_POLL_MS: '600000', PUBLIC_BASE_URL: origin, UPSTREAM_CALLBACKS: 'on', UPSTREAM_CALLBACKS_PER_SECOND: '1' },
      undefined,
      { workers: true },
    );
    await c.app.listen({ port, host: '127.0.0.1' });
    const channel = await c.app.inject({
      method: 'POST',
      url: '/admin/channels',
      headers: adminHeaders,
      payload: { name: 'cb-ark', type: 'ark', base_url: cb.url, secret: cb.apiKey, models: ['vidgen-2.0'], priority: 10 },
    });
    expect(channel.statusCode).toBe(201);
  });
  afterAll(async () => {
    await c?.close();
    await cb?.close();
  });

  it('sends callback_url with a per-task token; the callback triggers the poll that completes the task; a late one changes nothing', async () => {
    const { auth } = await seedAccount(c.ctx, 50);
    const res = await c.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model: 'vidgen-2.0', prompt: 'a called-back crane' } });
    const id = res.json().data[0].task_id;
    let data: any;
    for (let i = 0; i < 200; i++) {
      data = (await c.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
      if (data.status === 'completed' || data.status === 'failed') break;
      await sleep(25);
    }
    expect(data.status).toBe('completed');
    const upstream = [...cb.tasks.values()].find((t) => t.body.content[0].text === 'a called-back crane')!;
    const url = new URL(upstream.body.callback_url);
    expect(url.origin).toBe(origin);
    expect(url.pathname.startsWith(`/upstream/callbacks/${id}/`)).toBe(true);
    expect(url.pathname.split('/').pop()!.length).toBeGreaterThanOrEqual(40);
    // Callbacks for queued, running and succeeded reached us; one poll after the success ended it.
    for (let i = 0; i < 100 && cb.callbacksSent.filter(([t]) => t === upstream.id).length < 3; i++) await sleep(20);
    expect(cb.callbacksSent.filter(([t]) => t === upstream.id).map(([, s, code]) => [s, code])).toEqual([
      ['queued', 200],
      ['running', 200],
      ['succeeded', 200],
    ]);
    // After the ending, a callback (a repeat) is answered and changes nothing.
    const again = await request(upstream.body.callback_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: upstream.id, status: 'failed' }) });
    expect(again.statusCode).toBe(200);
    await again.body.dump();
    const after = (await c.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
    expect(after.status).toBe('completed');
  });

  it('a callback with a wrong token is refused like an unknown task and triggers no poll; the right one does', async () => {
    cb.sendCallbacks = false;
    const { auth } = await seedAccount(c.ctx, 50);
    const res = await c.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model: 'vidgen-2.0', prompt: 'a forged heron [ark:fail=X]' } });
    const id = res.json().data[0].task_id;
    const pollsBefore = () => cb.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v3/contents/generations/tasks/')).length;
    await sleep(50);
    const polls = pollsBefore();
    const forged = await c.app.inject({ method: 'POST', url: `/upstream/callbacks/${id}/${'A'.repeat(43)}`, payload: { status: 'succeeded' } });
    const unknown = await c.app.inject({ method: 'POST', url: `/upstream/callbacks/task_nope/${'A'.repeat(43)}`, payload: {} });
    expect(forged.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(forged.body).toBe(unknown.body);
    await sleep(200);
    expect(pollsBefore()).toBe(polls);
    expect((await c.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data.status).toBe('processing');
    // The URL ModelArk was given works: one callback, one poll, and the task ends as the poll says.
    const upstream = [...cb.tasks.values()].find((t) => t.body.content[0].text.startsWith('a forged heron'))!;
    // A callback that reports no ending (queued, running) is answered and polls nothing.
    const running = await c.app.inject({ method: 'POST', url: new URL(upstream.body.callback_url).pathname, payload: { status: 'running' } });
    expect(running.statusCode).toBe(200);
    await sleep(200);
    expect(pollsBefore()).toBe(polls);
    await sleep(Math.max(0, upstream.createdAt + 400 - Date.now())); // it has failed there by now
    const right = await c.app.inject({ method: 'POST', url: new URL(upstream.body.callback_url).pathname, payload: { status: 'succeeded' } });
    expect(right.statusCode).toBe(200);
    let data: any;
    for (let i = 0; i < 100; i++) {
      data = (await c.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
      if (data.status === 'failed') break;
      await sleep(20);
    }
    // The body said succeeded; the poll said failed: the callback is never the result.
    expect([data.status, data.error.code]).toEqual(['failed', 'upstream_error']);
    expect(pollsBefore()).toBe(polls + 1);
    cb.sendCallbacks = true;
  });

  it('the limit (60 a minute here) refuses strangers with 429, never the queued and running callbacks of real tasks', async () => {
    cb.sendCallbacks = false;
    const { auth } = await seedAccount(c.ctx, 50);
    const res = await c.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: auth, payload: { model: 'vidgen-2.0', prompt: 'a limited egret' } });
    const id = res.json().data[0].task_id;
    await sleep(50);
    const upstream = [...cb.tasks.values()].find((t) => t.body.content[0].text === 'a limited egret')!;
    const own = new URL(upstream.body.callback_url).pathname;
    const forged = `/upstream/callbacks/${id}/${'B'.repeat(43)}`;
    const codes = { forged: new Set<number>(), running: new Set<number>() };
    // The limit counts in minute windows: 70 strangers split across two of them are under it in both.
    await awayFromRateWindowEdge();
    for (let i = 0; i < 70; i++) {
      codes.forged.add((await c.app.inject({ method: 'POST', url: forged, payload: { status: 'running' } })).statusCode);
      codes.running.add((await c.app.inject({ method: 'POST', url: own, payload: { status: i % 2 ? 'running' : 'queued' } })).statusCode);
    }
    expect(codes.forged).toEqual(new Set([404, 429]));
    expect(codes.running).toEqual(new Set([200]));
    cb.sendCallbacks = true;
  });
});
