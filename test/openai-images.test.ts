import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { findChannels } from '../src/modules/channels/channels.service.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.ts';
import { freePort } from './support/gateway-process.ts';

// The `openai` channel type for images, proven three ways: the official SDK (openai@6) drives the fake
// (so the fake speaks the real protocol and refuses what the real API refuses), then our adapter drives
// the same fake field by field, through real tasks with real money.

let fake: FakeOpenAI;
let refs: { url: string; files: Map<string, { bytes: Buffer; type: string }>; close(): Promise<void> };
const png = await sharp({ create: { width: 64, height: 64, channels: 4, background: { r: 10, g: 200, b: 30, alpha: 1 } } }).png().toBuffer();
const jpg = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 20, b: 30 } } }).jpeg().toBuffer();
const mask = await sharp({ create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();

/** A host serving reference images (a caller's URLs). */
async function startRefHost() {
  const files = new Map<string, { bytes: Buffer; type: string }>();
  const server = http.createServer((req, res) => {
    const file = files.get(req.url ?? '');
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length }).end(file.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, files, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  refs = await startRefHost();
  refs.files.set('/ref.png', { bytes: png, type: 'image/png' });
  refs.files.set('/mask.png', { bytes: mask, type: 'image/png' });
  refs.files.set('/huge.png', { bytes: Buffer.concat([png, Buffer.alloc(21 * 1024 * 1024)]), type: 'image/png' });
});
afterAll(async () => {
  await fake.close();
  await refs.close();
});

describe('the fake OpenAI Images API, driven by the official SDK (openai@6)', () => {
  const client = () => new OpenAI({ apiKey: fake.key, baseURL: `${fake.url}/v1`, maxRetries: 0 });

  it('images.generate: every field we send, answered with base64 images and usage', async () => {
    const answer = await client().images.generate({
      model: 'gpt-image-2', prompt: 'a lighthouse', n: 2, size: '1536x864', quality: 'high', background: 'opaque', moderation: 'low', output_format: 'webp', output_compression: 50,
    });
    expect(answer.data).toHaveLength(2);
    const meta = await sharp(Buffer.from(answer.data![0]!.b64_json!, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 1536, 864]);
    expect(answer.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 544, input_tokens_details: { text_tokens: expect.any(Number) } });
    const seen = fake.requests.at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(seen.fields).toEqual({ model: 'gpt-image-2', prompt: 'a lighthouse', n: 2, size: '1536x864', quality: 'high', background: 'opaque', moderation: 'low', output_format: 'webp', output_compression: 50 });
  });

  it('images.edit: several images as image[], a mask, every other field a string part', async () => {
    const answer = await client().images.edit({
      model: 'gpt-image-2', prompt: 'add a boat', n: 1, size: '1024x1024', output_format: 'jpeg',
      image: [await toFile(png, 'a.png', { type: 'image/png' }), await toFile(jpg, 'b.jpg', { type: 'image/jpeg' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    });
    expect(answer.data).toHaveLength(1);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe('/v1/images/edits');
    expect(seen.files.map((f) => [f.field, f.type])).toEqual([['image[]', 'image/png'], ['image[]', 'image/jpeg'], ['mask', 'image/png']]);
    expect(seen.files[1]!.bytes.equals(jpg)).toBe(true);
    expect(seen.fields).toEqual({ model: 'gpt-image-2', prompt: 'add a boat', n: '1', size: '1024x1024', output_format: 'jpeg' });
  });

  it('refuses what the real API refuses, in the error shape the SDK parses', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong-key-xyz', baseURL: `${fake.url}/v1`, maxRetries: 0 });
    await expect(wrong.images.generate({ model: 'gpt-image-2', prompt: 'x' })).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await expect(client().images.generate({ model: 'gpt-image-2', prompt: 'x', foo: 1 } as any)).rejects.toMatchObject({ status: 400, code: 'unknown_parameter', param: 'foo' });
    await expect(client().images.generate({ model: 'gpt-image-2', prompt: 'x', n: '2' } as any)).rejects.toMatchObject({ status: 400, code: 'invalid_type' });
    await expect(client().images.generate({ model: 'gpt-image-2', prompt: 'x', size: '1000x1000' })).rejects.toMatchObject({ status: 400, param: 'size' });
    await expect(client().images.generate({ model: 'gpt-image-2', prompt: 'x', output_format: 'png', output_compression: 5 })).rejects.toMatchObject({ status: 400, param: 'output_compression' });
    const blocked = client().images.generate({ model: 'gpt-image-2', prompt: 'x [blocked]' });
    await expect(blocked).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(blocked).rejects.toMatchObject({ code: 'moderation_blocked', type: 'image_generation_user_error' });
    await expect(client().images.edit({ model: 'gpt-image-2', prompt: 'x', image: await toFile(Buffer.from('GIF89a'), 'a.gif', { type: 'image/gif' }) })).rejects.toMatchObject({ status: 400, param: 'image' });
    expect((await client().models.retrieve('gpt-image-2')).id).toBe('gpt-image-2');
  });
});

describe(`the openai channel type for images [${backendName}]`, () => {
  let t: TestApp;
  let channelId: string;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ FETCH_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: base }, undefined, { workers: true });
    await t.app.listen({ port, host: '127.0.0.1' });
    // Only this channel serves: nothing falls back to the built-in simulator.
    for (const channel of await findChannels(t.ctx.db)) await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
    const created = await t.app.inject({
      method: 'POST', url: '/admin/channels', headers: adminHeaders,
      payload: { name: 'openai', type: 'openai', base_url: `${fake.url}/`, secret: fake.key, models: ['imggen-2-official', 'imggen-2'], model_mapping: { 'imggen-2': 'gpt-image-1.5' }, options: { organization: 'org-gw', project: 'proj-gw' } },
    });
    expect(created.statusCode).toBe(201);
    channelId = created.json().id;
  });
  afterAll(async () => t.close());

  async function run(account: Awaited<ReturnType<typeof seedAccount>>, payload: Record<string, unknown>) {
    const before = fake.requests.length;
    const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload });
    expect(submit.statusCode).toBe(200);
    const id = submit.json().data[0].task_id;
    for (let i = 0; i < 400; i++) {
      const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
      if (task.status === 'completed' || task.status === 'failed') return { task, seen: fake.requests.slice(before), row: await t.ctx.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow() };
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('task did not end');
  }
  const used = async (account: Awaited<ReturnType<typeof seedAccount>>) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance;
  const download = async (link: string) => Buffer.from(await (await request(link)).body.arrayBuffer());

  it('imggen-2-official: every imggen-2-official field mapped, the images served byte for byte from our links, its tier charged', async () => {
    const account = await seedAccount(t.ctx, 5);
    const produced = fake.produced.length;
    const { task, seen, row } = await run(account, {
      model: 'imggen-2-official', prompt: 'a red kite', size: '16:9', resolution: '2k', quality: 'medium', background: 'transparent', moderation: 'low', output_format: 'jpeg', output_compression: 40, n: 2,
    });
    expect(task.status).toBe('completed');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/v1/images/generations');
    // transparent is produced as auto (as the catalog says); the ratio and tier become the pixel size of our table.
    expect(seen[0]!.fields).toEqual({ model: 'gpt-image-2', prompt: 'a red kite', n: 2, size: '2048x1152', quality: 'medium', background: 'auto', moderation: 'low', output_format: 'jpeg', output_compression: 40 });
    expect(seen[0]!.headers).toMatchObject({ authorization: `Bearer ${fake.key}`, 'openai-organization': 'org-gw', 'openai-project': 'proj-gw' });
    const links: string[] = task.result.images[0].url;
    expect(links).toHaveLength(2);
    for (const [i, link] of links.entries()) {
      expect(link.startsWith(`${base}/files/`)).toBe(true);
      expect((await download(link)).equals(fake.produced[produced + i]!)).toBe(true);
    }
    expect(row.cost).toBe(t.ctx.pricing.imageUnits('imggen-2-official', '2k', 'medium', 2));
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('imggen-2 (alias imggen-2-ext): ratio and tier as pixels, the channel mapping names the OpenAI model, billed per resolution tier', async () => {
    const account = await seedAccount(t.ctx, 5);
    const { task, seen, row } = await run(account, { model: 'imggen-2-ext', prompt: 'a harbour', size: '3:2', resolution: '4k' });
    expect(task.status).toBe('completed');
    expect(seen[0]!.fields).toEqual({ model: 'gpt-image-1.5', prompt: 'a harbour', n: 1, size: '3520x2352', output_format: 'png' });
    expect((await download(task.result.images[0].url[0])).equals(fake.produced.at(-1)!)).toBe(true);
    expect(row.cost).toBe(t.ctx.pricing.imageUnits('imggen-2', '4k', undefined, 1));
    expect(await used(account)).toBe(0.08);
  });

  it('pixel sizes and auto pass as WxH; webp with its compression', async () => {
    const account = await seedAccount(t.ctx, 5);
    const free = await run(account, { model: 'imggen-2-official', prompt: 'p', size: '1536x864', output_format: 'webp', output_compression: 70 });
    expect(free.seen[0]!.fields).toMatchObject({ size: '1536x864', output_format: 'webp', output_compression: 70, quality: 'auto', background: 'auto', moderation: 'auto' });
    const auto = await run(account, { model: 'imggen-2-official', prompt: 'p', size: 'auto' });
    expect(auto.seen[0]!.fields).toMatchObject({ size: '1024x1024', output_format: 'png' });
    expect((await sharp(await download(free.task.result.images[0].url[0])).metadata()).format).toBe('webp');
  });

  it('reference images (a URL and a data URL) and the mask arrive as the edit\'s image[] and mask files, byte for byte', async () => {
    const account = await seedAccount(t.ctx, 5);
    const dataUrl = `data:image/jpeg;base64,${jpg.toString('base64')}`;
    const { task, seen } = await run(account, { model: 'imggen-2-official', prompt: 'add a boat', image_urls: [`${refs.url}/ref.png`, dataUrl], mask_url: `${refs.url}/mask.png`, moderation: 'low', n: 2 });
    expect(task.status).toBe('completed');
    expect(seen[0]!.path).toBe('/v1/images/edits');
    expect(seen[0]!.files.map((f) => [f.field, f.type])).toEqual([['image[]', 'image/png'], ['image[]', 'image/jpeg'], ['mask', 'image/png']]);
    expect([seen[0]!.files[0]!.bytes.equals(png), seen[0]!.files[1]!.bytes.equals(jpg), seen[0]!.files[2]!.bytes.equals(mask)]).toEqual([true, true, true]);
    // The edits endpoint takes no moderation; numbers travel as strings in multipart.
    expect(seen[0]!.fields).toEqual({ model: 'gpt-image-2', prompt: 'add a boat', n: '2', size: '1024x1024', quality: 'auto', background: 'auto', output_format: 'png' });
    expect(task.result.images[0].url).toHaveLength(2);
  });

  it('a reference over 20 MB fails the task before any upstream call, refunded', async () => {
    const account = await seedAccount(t.ctx, 5);
    const { task, seen } = await run(account, { model: 'imggen-2', prompt: 'p', image_urls: [`${refs.url}/ref.png`, `${refs.url}/huge.png`] });
    expect([task.status, task.error.code]).toEqual(['failed', 'task_failed']);
    expect(task.error.message).toContain('image_urls[1]');
    expect(seen).toHaveLength(0);
    expect(await used(account)).toBe(0);
  });

  it('moderation_blocked fails the task as content_policy_violation, charged nothing, the ledger balanced', async () => {
    const account = await seedAccount(t.ctx, 5);
    const { task, row } = await run(account, { model: 'imggen-2-official', prompt: 'something [blocked]', resolution: '4k', quality: 'high' });
    expect([task.status, task.error.code]).toEqual(['failed', 'content_policy_violation']);
    expect(row.cost).toBe(0);
    expect(await used(account)).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("another 4xx fails the task with the upstream's message, refunded", async () => {
    const account = await seedAccount(t.ctx, 5);
    fake.script.push({ status: 400, error: { message: 'Billing hard limit has been reached.', code: 'billing_hard_limit_reached' } });
    const { task, seen } = await run(account, { model: 'imggen-2', prompt: 'p' });
    expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
    expect(task.error.message).toContain('Billing hard limit has been reached.');
    expect(seen).toHaveLength(1);
    expect(await used(account)).toBe(0);
  });

  it('401 and 403: upstream_error naming no secret, the channel marked as needing attention until its secret changes', async () => {
    const account = await seedAccount(t.ctx, 5);
    const patch = (payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: `/admin/channels/${channelId}`, headers: adminHeaders, payload });
    expect((await patch({ secret: 'sk-revoked-0123456789' })).statusCode).toBe(200);
    const { task } = await run(account, { model: 'imggen-2', prompt: 'p' });
    expect([task.status, task.error.code]).toEqual(['failed', 'upstream_error']);
    // The fake's 401 text quotes the key's ends, as OpenAI's does: none of it reaches the caller.
    expect(task.error.message).not.toMatch(/sk-rev|6789|\*\*\*|Incorrect API key/);
    expect(await used(account)).toBe(0);
    const listed = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.id === channelId);
    expect(listed.health).toMatchObject({ needs_attention: true, consecutive_failures: 1, last_error: expect.stringContaining('401') });
    expect(JSON.stringify(listed)).not.toContain('sk-revoked');
    // `gateway channels list` prints the same view.
    expect((await findChannels(t.ctx.db)).find((c) => c.id === channelId)!.health.needs_attention).toBe(true);
    const tested = (await t.app.inject({ method: 'POST', url: `/admin/channels/${channelId}/test`, headers: adminHeaders })).json();
    expect(tested).toMatchObject({ ok: false, detail: expect.stringContaining('401') });

    // A new secret is the operator's answer: the mark is cleared and tasks run again.
    expect((await patch({ secret: fake.key })).json().health).toMatchObject({ needs_attention: false, consecutive_failures: 0 });
    expect((await t.app.inject({ method: 'POST', url: `/admin/channels/${channelId}/test`, headers: adminHeaders })).json()).toMatchObject({ ok: true, detail: 'gpt-image-2 is available' });
    fake.script.push({ status: 403, error: { message: 'Project proj-gw does not have access to model gpt-image-2', code: null } });
    const forbidden = await run(account, { model: 'imggen-2-official', prompt: 'p' });
    expect([forbidden.task.status, forbidden.task.error.code]).toEqual(['failed', 'upstream_error']);
    expect(forbidden.task.error.message).toContain('403');
    expect((await findChannels(t.ctx.db)).find((c) => c.id === channelId)!.health.needs_attention).toBe(true);
    // An accepted task clears it too.
    expect((await run(account, { model: 'imggen-2', prompt: 'p' })).task.status).toBe('completed');
    expect((await findChannels(t.ctx.db)).find((c) => c.id === channelId)!.health).toMatchObject({ needs_attention: false, consecutive_failures: 0 });
  });
});

describe(`openai references under the address rules [${backendName}]`, () => {
  it('without FETCH_ALLOW_PRIVATE a reference on a private address is refused: the task fails, refunded, nothing sent upstream', async () => {
    const t = await createTestApp({}, undefined, { workers: true });
    try {
      for (const channel of await findChannels(t.ctx.db)) await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
      await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'openai', type: 'openai', base_url: fake.url, secret: fake.key, models: ['imggen-2'] } });
      const account = await seedAccount(t.ctx, 5);
      const before = fake.requests.length;
      const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'p', image_urls: [`${refs.url}/ref.png`] } });
      const id = submit.json().data[0].task_id;
      let task: any;
      for (let i = 0; i < 200 && !['completed', 'failed'].includes(task?.status); i++) {
        await new Promise((r) => setTimeout(r, 25));
        task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
      }
      expect([task.status, task.error.code]).toEqual(['failed', 'task_failed']);
      expect(task.error.message).toMatch(/image_urls\[0\].*refused/);
      expect(fake.requests.length).toBe(before);
      expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0);
    } finally {
      await t.close();
    }
  });
});
