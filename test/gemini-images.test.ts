import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, GoogleGenAI } from '@google/genai';
import { countTokens } from 'gpt-tokenizer';
import sharp from 'sharp';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { FAKE_GEMINI_IMAGE_TOKENS, FAKE_GEMINI_TOKENS_PER_INPUT_IMAGE, startFakeGemini, type FakeGemini } from './support/fake-gemini.ts';

// The `gemini` channel type for images. First @google/genai (the vendor's SDK) drives the local fake,
// which shows the fake speaks the real protocol; then our provider drives the same fake through the
// gateway: every field mapped, our links serving the fake's bytes, references as inlineData, each
// refusal, and the money.

const KEY = 'gm-test-key-4f1c';
let fake: FakeGemini;
let t: TestApp;
let refs: { url: string; png: Buffer; big: Buffer; close(): Promise<void> };

async function startReferenceHost() {
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#aa3300' } }).png().toBuffer();
  const big = Buffer.alloc(21 * 1024 * 1024, 1);
  const server = http.createServer((req, res) => {
    const body = req.url === '/big.png' ? big : png;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, png, big, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function addChannel(app: TestApp, body: Record<string, unknown> = {}) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: `gemini-${Math.random().toString(36).slice(2, 8)}`, type: 'gemini', base_url: fake.url, secret: KEY, models: ['imgflash-3.1-preview', 'imgpro-3-preview', 'imglite-3.1'], priority: 10, ...body },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

type Account = Awaited<ReturnType<typeof seedAccount>>;

async function run(app: TestApp, account: Account, payload: Record<string, unknown>) {
  const submit = await app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload });
  expect(submit.statusCode).toBe(200);
  const id = submit.json().data[0].task_id;
  for (let i = 0; i < 600; i++) {
    const task = (await app.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    if (task.status === 'completed' || task.status === 'failed') return task;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('task did not end');
}

async function download(app: TestApp, link: string): Promise<Buffer> {
  const url = new URL(link);
  const res = await app.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  expect(res.statusCode).toBe(200);
  return res.rawPayload;
}

const used = async (app: TestApp, account: Account) => (await app.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance;

beforeAll(async () => {
  fake = await startFakeGemini(KEY);
  refs = await startReferenceHost();
  t = await createTestApp({ FETCH_ALLOW_PRIVATE: 'true' }, undefined, { workers: true });
  await addChannel(t);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
  await refs?.close();
});

describe('the Gemini fake speaks the real protocol (@google/genai drives it)', () => {
  it('generateContent with responseModalities IMAGE and imageConfig answers an inlineData image the SDK reads', async () => {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: fake.url } });
    const before = fake.requests.length;
    const answer = await ai.models.generateContent({
      model: 'gemini-3.1-flash-image-preview',
      contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dusk' }, { inlineData: { mimeType: 'image/png', data: refs.png.toString('base64') } }] }],
      config: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
    });
    const sent = fake.requests[before]!;
    expect(sent.path).toBe('/v1beta/models/gemini-3.1-flash-image-preview:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.body.generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } });
    const image = answer.candidates?.[0]?.content?.parts?.find((p) => p.inlineData)?.inlineData;
    expect(image?.mimeType).toBe('image/png');
    const bytes = Buffer.from(image!.data!, 'base64');
    expect(bytes.equals(fake.images.at(-1)!.bytes)).toBe(true);
    const meta = await sharp(bytes).metadata();
    expect(meta.width! / meta.height!).toBeCloseTo(16 / 9, 1);
    expect(answer.usageMetadata).toMatchObject({ promptTokenCount: Math.ceil('a lighthouse at dusk'.length / 4) + FAKE_GEMINI_TOKENS_PER_INPUT_IMAGE, candidatesTokenCount: FAKE_GEMINI_IMAGE_TOKENS['2K'] });
    expect((await ai.models.get({ model: 'gemini-3-pro-image-preview' })).name).toBe('models/gemini-3-pro-image-preview');
  });

  it('is strict where the API is: a wrong key, an unknown field, a lower-case size, and a blocked prompt reach the SDK as the API sends them', async () => {
    const wrong = new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: fake.url } });
    const refusal = await wrong.models.generateContent({ model: 'gemini-3.1-flash-image-preview', contents: 'x' }).catch((e) => e);
    expect(refusal).toBeInstanceOf(ApiError);
    expect([refusal.status, refusal.message]).toEqual([400, expect.stringContaining('API_KEY_INVALID')]);
    const raw = async (body: unknown) => {
      const res = await request(`${fake.url}/v1beta/models/gemini-3.1-flash-image-preview:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    const unknown = await raw({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { size: '1K' } } });
    expect([unknown.status, unknown.body.error.status, unknown.body.error.message]).toEqual([400, 'INVALID_ARGUMENT', expect.stringContaining('Unknown name "size"')]);
    const lower = await raw({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { imageSize: '1k' } } });
    expect(lower.status).toBe(400);
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: fake.url } });
    const blocked = await ai.models.generateContent({ model: 'gemini-3.1-flash-image-preview', contents: 'x [blocked-prompt]', config: { responseModalities: ['IMAGE'] } });
    expect([blocked.candidates, blocked.promptFeedback?.blockReason]).toEqual([undefined, 'PROHIBITED_CONTENT']);
  });
});

describe(`gemini channel: images through our provider [${backendName}]`, () => {
  it('maps every field: model, prompt, size -> aspectRatio, resolution -> imageSize, n -> n calls; our links serve the bytes the upstream sent', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const task = await run(t, account, { model: 'imgflash', prompt: 'two lanterns', size: '4:1', resolution: '2K', n: 2 });
    expect(task.status).toBe('completed');
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(2);
    for (const r of sent) {
      expect(r.path).toBe('/v1beta/models/gemini-3.1-flash-image-preview:generateContent');
      expect(r.headers['x-goog-api-key']).toBe(KEY);
      expect(r.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'two lanterns' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:1', imageSize: '2K' } },
      });
    }
    const links: string[] = task.result.images[0].url;
    expect(links).toHaveLength(2);
    const made = fake.images.slice(-2).map((i) => i.bytes);
    for (const link of links) {
      expect(link).toContain('/files/');
      const bytes = await download(t, link);
      expect(made.some((m) => m.equals(bytes))).toBe(true);
    }
    expect(await used(t, account)).toBeCloseTo(0.12, 6);
  });

  it('imgpro-3-preview: the draft (thought) image is skipped; the channel model_mapping overrides the default model', async () => {
    const account = await seedAccount(t.ctx, 5);
    let before = fake.requests.length;
    const task = await run(t, account, { model: 'imgpro-ext', prompt: 'a glass cube', size: '3:2', resolution: '1k' });
    expect(task.status).toBe('completed');
    expect(fake.requests[before]!.path).toBe('/v1beta/models/gemini-3-pro-image-preview:generateContent');
    expect(fake.requests[before]!.body.generationConfig.imageConfig).toEqual({ aspectRatio: '3:2', imageSize: '1K' });
    expect((await download(t, task.result.images[0].url[0])).equals(fake.images.at(-1)!.bytes)).toBe(true);
    expect(await used(t, account)).toBeCloseTo(0.134, 6);

    const other = await createTestApp({}, undefined, { workers: true });
    try {
      await addChannel(other, { models: ['imgpro-3-preview'], model_mapping: { 'imgpro-3-preview': 'models/gemini-3.1-flash-image-preview' } });
      before = fake.requests.length;
      const mapped = await run(other, await seedAccount(other.ctx, 5), { model: 'imgpro-3-preview', prompt: 'mapped', size: '1:1' });
      expect(mapped.status).toBe('completed');
      expect(fake.requests[before]!.path).toBe('/v1beta/models/gemini-3.1-flash-image-preview:generateContent');
    } finally {
      await other.close();
    }
  });

  it('an upstream that answers JPEG, no format asked: the bytes served are the upstream\'s, as image/jpeg (imgpro-3-preview and imgflash-3.1-preview)', async () => {
    fake.format = 'jpeg';
    try {
      for (const model of ['imgpro-3-preview', 'imgflash-3.1-preview']) {
        const task = await run(t, await seedAccount(t.ctx, 5), { model, prompt: 'as it comes', size: '1:1' });
        expect(task.status).toBe('completed');
        const link = new URL(task.result.images[0].url[0]);
        const res = await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
        expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/jpeg']);
        expect(res.rawPayload.equals(fake.images.at(-1)!.bytes)).toBe(true);
      }
      // Asked for PNG, it is converted.
      const asked = await run(t, await seedAccount(t.ctx, 5), { model: 'imgpro-3-preview', prompt: 'png please', size: '1:1', output_format: 'png' });
      expect((await sharp(await download(t, asked.result.images[0].url[0])).metadata()).format).toBe('png');
    } finally {
      fake.format = undefined;
    }
  });

  it('output_format and output_compression: the image is re-encoded to the asked format', async () => {
    const task = await run(t, await seedAccount(t.ctx, 5), { model: 'imgflash-3.1-preview', prompt: 'jpeg please', size: '1:1', output_format: 'jpeg', output_compression: 40 });
    expect(task.status).toBe('completed');
    const meta = await sharp(await download(t, task.result.images[0].url[0])).metadata();
    const sent = await sharp(fake.images.at(-1)!.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', sent.width, sent.height]);
  });

  it('imglite-3.1: 4K is produced at 1K without an error and billed per input and output token from usageMetadata', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const prompt = 'a paper boat on a pond';
    const task = await run(t, account, { model: 'imglite', prompt, size: '9:16', resolution: '4K' });
    expect(task.status).toBe('completed');
    expect(fake.requests[before]!.path).toBe('/v1beta/models/gemini-3.1-flash-lite-image:generateContent');
    expect(fake.requests[before]!.body.generationConfig.imageConfig).toEqual({ aspectRatio: '9:16', imageSize: '1K' });
    // The fake's usage: prompt tokens, and the image's tokens plus 40 thinking tokens (billed as output).
    const input = Math.ceil(prompt.length / 4);
    const output = FAKE_GEMINI_IMAGE_TOKENS['1K']! + 40;
    const units = Math.ceil(input * 0.3 + output * 30);
    const hold = Math.ceil(countTokens(prompt) * 0.3 + 1290 * 30);
    expect(units).toBeLessThan(hold);
    expect(await used(t, account)).toBeCloseTo(units / 1e6, 6);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('imglite-3.1: usage above the hold is charged the hold, never more', async () => {
    const account = await seedAccount(t.ctx, 5);
    const prompt = 'four koi, one for each season';
    fake.outputTokens = 5000;
    try {
      const task = await run(t, account, { model: 'imglite-3.1', prompt, size: '1:1', n: 4 });
      expect(task.status).toBe('completed');
      expect(task.result.images[0].url).toHaveLength(4);
    } finally {
      fake.outputTokens = undefined;
    }
    const hold = Math.ceil(countTokens(prompt) * 0.3 + 4 * 1290 * 30);
    const reported = Math.ceil(4 * Math.ceil(prompt.length / 4) * 0.3 + 4 * (5000 + 40) * 30);
    expect(reported).toBeGreaterThan(hold);
    expect(await used(t, account)).toBeCloseTo(hold / 1e6, 6);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('references reach the upstream as inlineData: URLs fetched, data: URLs decoded, the type read from the bytes', async () => {
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00ff00' } }).jpeg().toBuffer();
    const before = fake.requests.length;
    const task = await run(t, await seedAccount(t.ctx, 5), {
      model: 'imgflash-3.1-preview',
      prompt: 'blend them',
      image_urls: [`${refs.url}/a.png`, `data:image/jpeg;base64,${jpeg.toString('base64')}`],
    });
    expect(task.status).toBe('completed');
    expect(fake.requests[before]!.body.contents[0].parts).toEqual([
      { text: 'blend them' },
      { inlineData: { mimeType: 'image/png', data: refs.png.toString('base64') } },
      { inlineData: { mimeType: 'image/jpeg', data: jpeg.toString('base64') } },
    ]);
  });

  it('a reference over 20 MB fails the task before any upstream call, and refunds it', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const task = await run(t, account, { model: 'imgflash-3.1-preview', prompt: 'too big', image_urls: [`${refs.url}/big.png`] });
    expect([task.status, task.error.message]).toEqual(['failed', expect.stringContaining('20 MB')]);
    expect(fake.requests.length).toBe(before);
    expect(await used(t, account)).toBe(0);
  });

  it('each refusal class fails the task with content_policy_violation and charges nothing; an answer without an image is an upstream_error', async () => {
    const account = await seedAccount(t.ctx, 5);
    for (const marker of ['[blocked-prompt]', '[image-safety]', '[prohibited]']) {
      const task = await run(t, account, { model: 'imgflash-3.1-preview', prompt: `a scene ${marker}` });
      expect([task.status, task.error.code]).toEqual(['failed', 'content_policy_violation']);
    }
    const lite = await run(t, account, { model: 'imglite-3.1', prompt: 'x [image-safety]' });
    expect([lite.status, lite.error.code, lite.cost]).toEqual(['failed', 'content_policy_violation', 0]);
    const none = await run(t, account, { model: 'imgflash-3.1-preview', prompt: 'words only [no-image]' });
    expect([none.status, none.error.code, none.error.message]).toEqual(['failed', 'upstream_error', expect.stringContaining('without an image')]);
    expect(await used(t, account)).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a refused key fails the task as upstream_error naming no secret; the connection test makes a real call', async () => {
    const other = await createTestApp({}, undefined, { workers: true });
    try {
      const channel = await addChannel(other, { secret: 'gm-wrong-key-9z9z' });
      const task = await run(other, await seedAccount(other.ctx, 5), { model: 'imgflash-3.1-preview', prompt: 'x' });
      expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
      expect(task.error.message).toContain('API_KEY_INVALID');
      expect(JSON.stringify(task)).not.toContain('gm-wrong-key-9z9z');
      const failed = (await other.app.inject({ method: 'POST', url: `/admin/channels/${channel.id}/test`, headers: adminHeaders })).json();
      expect([failed.ok, failed.detail]).toEqual([false, expect.stringContaining("refused the channel's API key")]);
      const good = await addChannel(other);
      const before = fake.requests.length;
      const passed = (await other.app.inject({ method: 'POST', url: `/admin/channels/${good.id}/test`, headers: adminHeaders })).json();
      expect([passed.ok, passed.detail]).toEqual([true, 'models/gemini-3.1-flash-image-preview is available to this key']);
      expect(fake.requests[before]).toMatchObject({ path: '/v1beta/models/gemini-3.1-flash-image-preview', headers: { 'x-goog-api-key': KEY } });
    } finally {
      await other.close();
    }
  });

  it('a channel whose upstream answers 503 or 429 is passed over: the task completes on the next channel, charged once', async () => {
    const other = await createTestApp({}, undefined, { workers: true });
    const broken = await startFakeGemini(KEY);
    try {
      for (const mode of ['down', 'busy'] as const) {
        broken.mode = mode;
        const first = await addChannel(other, { base_url: broken.url, priority: 50, models: ['imgflash-3.1-preview'] });
        await addChannel(other, { priority: 40, models: ['imgflash-3.1-preview'] });
        const account = await seedAccount(other.ctx, 5);
        const before = broken.requests.length;
        const task = await run(other, account, { model: 'imgflash-3.1-preview', prompt: `failover ${mode}` });
        expect(task.status).toBe('completed');
        expect(broken.requests.length).toBeGreaterThan(before);
        expect((await download(other, task.result.images[0].url[0])).equals(fake.images.at(-1)!.bytes)).toBe(true);
        expect(await used(other, account)).toBeCloseTo(0.039, 6);
        await other.app.inject({ method: 'DELETE', url: `/admin/channels/${first.id}`, headers: adminHeaders });
      }
      expect(await auditLedger(other.ctx.db)).toEqual([]);
    } finally {
      await other.close();
      await broken.close();
    }
  });

  it('a caller reference on a private address is refused under the address rules (FETCH_ALLOW_PRIVATE off)', async () => {
    const other = await createTestApp({}, undefined, { workers: true });
    try {
      await addChannel(other);
      const account = await seedAccount(other.ctx, 5);
      const before = fake.requests.length;
      const task = await run(other, account, { model: 'imgflash-3.1-preview', prompt: 'x', image_urls: [`${refs.url}/a.png`] });
      expect([task.status, task.error.message]).toEqual(['failed', expect.stringContaining('image_urls[0]')]);
      expect(fake.requests.length).toBe(before);
      expect(await used(other, account)).toBe(0);
    } finally {
      await other.close();
    }
  });
});
