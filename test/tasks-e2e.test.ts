import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { request } from 'undici';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';

let t: TestApp;
let base: string;
beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ SIMULATOR_LATENCY_MS: '400', PUBLIC_BASE_URL: base, TASK_DEADLINE_IMAGE_S: '2' }, undefined, { workers: true });
  await t.app.listen({ port, host: '127.0.0.1' });
});
afterAll(() => t.close());

async function call(method: 'GET' | 'POST', path: string, auth: Record<string, string>, body?: unknown) {
  const res = await request(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.statusCode, json: (await res.body.json()) as any };
}

async function submitAndWait(path: string, auth: Record<string, string>, body: unknown) {
  const submit = await call('POST', path, auth, body);
  expect(submit.status).toBe(200);
  const taskId = submit.json.data[0].task_id;
  const seen: number[] = [];
  for (let i = 0; i < 400; i++) {
    const { json } = await call('GET', `/v1/tasks/${taskId}`, auth);
    seen.push(json.data.progress);
    if (json.data.status === 'completed' || json.data.status === 'failed') return { record: json.data, seen };
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('task did not end');
}

const download = async (url: string) => {
  const res = await request(url);
  return { status: res.statusCode, type: res.headers['content-type'], bytes: Buffer.from(await res.body.arrayBuffer()) };
};

describe(`image and video tasks end to end [${backendName}]`, () => {
  it('image: submit, poll to completed (progress rising), download a file of the exact format and size', async () => {
    const account = await seedAccount(t.ctx, 5);
    const { record, seen } = await submitAndWait('/v1/images/generations', account.auth, { model: 'imggen-2', prompt: 'a red fox', size: '16:9', resolution: '2k', n: 2 });
    expect(record).toMatchObject({ status: 'completed', progress: 100 });
    expect(seen.some((p) => p > 10 && p < 100)).toBe(true);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(record.completed).toBeGreaterThanOrEqual(record.created);
    expect(record.actual_time).toBeGreaterThanOrEqual(0);
    expect(record.cost).toBeCloseTo(0.08);
    expect(record.credits_cost).toBe(80);
    expect(record.result.images).toHaveLength(1);
    expect(record.result.images[0].url).toHaveLength(2);
    for (const url of record.result.images[0].url) {
      const file = await download(url);
      expect([file.status, file.type]).toEqual([200, 'image/png']);
      const meta = await sharp(file.bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 2048, 1152]);
    }
  });

  it.each([
    ['jpeg', 'imggen-2-official', '3:2', '1k', 'jpeg', 1024, 688],
    ['webp', 'imgflash-3.1-preview', '1:8', '1k', 'webp', 128, 1024],
  ])('image as %s', async (_name, model, size, resolution, format, width, height) => {
    const account = await seedAccount(t.ctx, 5);
    const { record } = await submitAndWait('/v1/images/generations', account.auth, { model, prompt: 'x', size, resolution, output_format: format });
    const meta = await sharp((await download(record.result.images[0].url[0])).bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual([format, width, height]);
  });

  it('result links live 72 h for imgart-5-0-*, 24 h for imgpro-3-preview', async () => {
    const account = await seedAccount(t.ctx, 5);
    for (const [model, hours] of [['imgart-5-0-lite', 72], ['imgpro-3-preview', 24]] as const) {
      const { record } = await submitAndWait('/v1/images/generations', account.auth, { model, prompt: 'x' });
      expect(record.result.images[0].expires_at - record.completed).toBeGreaterThanOrEqual(hours * 3600 - 2);
      expect(record.result.images[0].expires_at - record.completed).toBeLessThanOrEqual(hours * 3600 + 2);
    }
  });

  it('video: a real MP4 of the asked size, with its last frame, and the video entry fields', async () => {
    const account = await seedAccount(t.ctx, 5);
    const { record } = await submitAndWait('/v1/videos/generations', account.auth, {
      model: 'vidgen-2.0-fast',
      prompt: 'waves',
      duration: 4,
      resolution: '480p',
      size: '16:9',
      return_last_frame: true,
    });
    expect(record.status).toBe('completed');
    const entry = record.result.videos[0];
    expect(entry).toEqual({ url: [expect.any(String)], expires_at: expect.any(Number), duration: 4, resolution: '480p', last_frame_url: expect.any(String) });
    const video = await download(entry.url[0]);
    expect([video.status, video.type]).toEqual([200, 'video/mp4']);
    expect(video.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(video.bytes.includes(Buffer.from('moov'))).toBe(true);
    const frame = await sharp((await download(entry.last_frame_url)).bytes).metadata();
    expect([frame.format, frame.width, frame.height]).toEqual(['png', 854, 480]);
    expect(record.cost).toBeCloseTo(0.08);
  });

  it('[sim:fail] ends failed with error.message and error.code, and the balance is back where it was', async () => {
    const account = await seedAccount(t.ctx, 1);
    const before = (await call('GET', '/v1/user/balance', account.auth)).json;
    const { record } = await submitAndWait('/v1/images/generations', account.auth, { prompt: 'nope [sim:fail]' });
    expect(record).toMatchObject({ status: 'failed', progress: 100, cost: 0, credits_cost: 0 });
    expect(record.error).toEqual({ code: 'upstream_error', message: expect.any(String) });
    expect(record.result).toBeUndefined();
    expect((await call('GET', '/v1/user/balance', account.auth)).json).toEqual(before);
  });

  it('a task past its deadline fails with error.code timeout and is refunded', async () => {
    const account = await seedAccount(t.ctx, 1);
    const before = (await call('GET', '/v1/user/balance', account.auth)).json;
    const { record } = await submitAndWait('/v1/images/generations', account.auth, { prompt: 'slow [sim:delay=30]' });
    expect(record.status).toBe('failed');
    expect(record.error.code).toBe('timeout');
    expect((await call('GET', '/v1/user/balance', account.auth)).json).toEqual(before);
  });

  it('per-token models settle the counted tokens, not the hold', async () => {
    const account = await seedAccount(t.ctx, 1);
    const { record } = await submitAndWait('/v1/images/generations', account.auth, { model: 'imglite', prompt: 'a small blue boat', resolution: '4K', n: 2 });
    // 2 images x 1290 tokens x $30/M + the prompt's tokens x $0.30/M
    expect(record.cost).toBeGreaterThan(0.0774);
    expect(record.cost).toBeLessThan(0.0775);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a result link stops working at expires_at, and a tampered link never works', async () => {
    const expired = t.ctx.files.signer.url({ spec: { k: 'image', w: 64, h: 64, f: 'png', s: 'x' }, expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const res = await request(expired);
    expect(res.statusCode).toBe(404);
    expect(((await res.body.json()) as any).error.type).toBe('not_found_error');
    const valid = t.ctx.files.signer.url({ spec: { k: 'image', w: 64, h: 64, f: 'png', s: 'x' }, expiresAt: Math.floor(Date.now() / 1000) + 60 });
    expect((await download(valid)).status).toBe(200);
    const tampered = valid.replace(/\/files\/[A-Za-z0-9_-]{4}/, '/files/AAAA');
    expect((await download(tampered)).status).toBe(404);
  });

  it('a simulated file is rendered into the store on first download, and swept from it after its expiry', async () => {
    const name = t.ctx.files.signer.name({ spec: { k: 'image', w: 32, h: 32, f: 'png', s: 'sweep' }, expiresAt: Math.floor(Date.now() / 1000) + 5 });
    const file = t.ctx.files.signer.verify(name)!;
    expect(await t.ctx.files.store.head(file.key)).toBeUndefined();
    expect((await download(`${t.ctx.config.publicBaseUrl}/files/${name}`)).status).toBe(200);
    expect(await t.ctx.files.store.head(file.key)).toMatchObject({ contentType: 'image/png' });
    expect(await t.ctx.files.store.sweep(file.expiresAt + 1)).toBeGreaterThanOrEqual(1);
    expect(await t.ctx.files.store.head(file.key)).toBeUndefined();
  });
});
