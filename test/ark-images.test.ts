import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { seedreamSize } from '../src/providers/ark/ark.images.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeArk, type FakeArk } from './support/fake-ark-images.ts';

// The `ark` channel type for images (Seedream on ModelArk). ModelArk has no official SDK on npm, so
// first the vendor's documented requests (its API reference's examples, and the body its Python SDK
// sends) drive the local fake; then our provider drives the same fake through the gateway.

const KEY = 'ark-test-key-7d2e';
let fake: FakeArk;
let t: TestApp;

type Account = Awaited<ReturnType<typeof seedAccount>>;

async function addChannel(app: TestApp, body: Record<string, unknown> = {}) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: `ark-${Math.random().toString(36).slice(2, 8)}`, type: 'ark', base_url: fake.url, secret: KEY, models: ['imgart-5-0-pro', 'imgart-5-0-lite'], priority: 10, ...body },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

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

async function post(body: unknown, key = KEY) {
  const res = await request(`${fake.url}/api/v3/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

beforeAll(async () => {
  fake = await startFakeArk(KEY);
  t = await createTestApp({}, undefined, { workers: true });
  await addChannel(t);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe("the ModelArk fake answers the vendor's documented requests", () => {
  it("the API reference's grouped example (text and two references to three images, url answers) and the Python SDK's body (unset fields as null)", async () => {
    // ModelArk "Image generation API" example: multi-reference input, grouped output.
    const grouped = await post({
      model: 'seedream-5-0-260128',
      prompt: 'Generate 3 images of a girl and a cow plushie happily riding a roller coaster in an amusement park, depicting morning, noon, and night.',
      image: ['https://ark-doc.tos-ap-southeast-1.bytepluses.com/doc_image/seedream4_imagesToimages_1.png', 'https://ark-doc.tos-ap-southeast-1.bytepluses.com/doc_image/seedream4_imagesToimages_2.png'],
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 3 },
      response_format: 'url',
      size: '2K',
      stream: false,
      watermark: true,
    });
    expect(grouped.status).toBe(200);
    expect(grouped.body).toMatchObject({ model: 'seedream-5-0-260128', usage: { generated_images: 3 } });
    expect(grouped.body.data).toHaveLength(3);
    for (const item of grouped.body.data) {
      expect(item).toEqual({ url: expect.stringMatching(/^http/), size: '2048x2048' });
      expect((await request(item.url)).statusCode).toBe(200);
    }
    // volcenginesdkarkruntime Images.generate(model=..., prompt=..., response_format="b64_json"): every other field null.
    const sdk = await post({
      model: 'seedream-5-0-pro-260628', prompt: 'a fisheye view of a cat', image: null, response_format: 'b64_json', size: null, seed: null, guidance_scale: null, watermark: null,
      optimize_prompt: null, optimize_prompt_options: null, sequential_image_generation: null, sequential_image_generation_options: null, tools: null, output_format: null, layer_decomposition: null, stream: false,
    });
    expect(sdk.status).toBe(200);
    expect(Buffer.from(sdk.body.data[0].b64_json, 'base64').equals(fake.images.at(-1)!.bytes)).toBe(true);
  });

  it("refuses as ModelArk does: a wrong key (401), a missing prompt, grouped output on Pro, a size under the model's pixels, sensitive text", async () => {
    const refusal = (r: { status: number; body: any }) => [r.status, r.body.error.code];
    expect(refusal(await post({ model: 'seedream-5-0-260128', prompt: 'x' }, 'wrong'))).toEqual([401, 'AuthenticationError']);
    expect(refusal(await post({ model: 'seedream-5-0-260128' }))).toEqual([400, 'MissingParameter']);
    expect(refusal(await post({ model: 'seedream-5-0-pro-260628', prompt: 'x', sequential_image_generation: 'auto' }))).toEqual([400, 'InvalidParameter']);
    // Our own 2K 16:9 table size (2048x1152) is under Seedream 5.0 lite's minimum: why Seedream gets its own sizes.
    expect(refusal(await post({ model: 'seedream-5-0-260128', prompt: 'x', size: '2048x1152' }))).toEqual([400, 'InvalidParameter']);
    expect((await post({ model: 'seedream-5-0-260128', prompt: 'x', size: seedreamSize('16:9', '2k') })).status).toBe(200);
    expect(refusal(await post({ model: 'seedream-5-0-260128', prompt: 'x [sensitive]' }))).toEqual([400, 'InputTextSensitiveContentDetected']);
  });
});

describe(`ark channel: Seedream images through our provider [${backendName}]`, () => {
  it('imgart-5-0-pro: every field mapped, the 24 h upstream link downloaded into our store, byte for byte, with our 72 h lifetime', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const downloads = fake.downloads;
    const task = await run(t, account, { model: 'imgart-5-0-pro', prompt: 'a red kite over dunes', size: '16:9', resolution: '2K' });
    expect(task.status).toBe('completed');
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent[0]!.body).toEqual({ model: 'seedream-5-0-pro-260628', prompt: 'a red kite over dunes', size: '2720x1536', response_format: 'url', output_format: 'png', watermark: false });
    expect(fake.downloads).toBe(downloads + 1);
    const link: string = task.result.images[0].url[0];
    expect(link).toContain('/files/');
    expect((await download(t, link)).equals(fake.images.at(-1)!.bytes)).toBe(true);
    expect(task.result.images[0].expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000) + 71 * 3600);
    expect(await used(t, account)).toBeCloseTo(0.05, 6);
  });

  it('imgart-5-0-lite with n: one call with grouped output (sequential_image_generation auto, max_images n); every image ours, charged per image', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const task = await run(t, account, { model: 'imgart-5-0-lite', prompt: 'four seasons of one garden', size: '4:3', resolution: '3K', n: 4, output_format: 'jpeg' });
    expect(task.status).toBe('completed');
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests[before]!.body).toEqual({
      model: 'seedream-5-0-260128', prompt: 'four seasons of one garden', size: seedreamSize('4:3', '3k'), response_format: 'url', output_format: 'jpeg', watermark: false,
      sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 },
    });
    const made = fake.images.slice(-4).map((i) => i.bytes);
    const links: string[] = task.result.images[0].url;
    expect(links).toHaveLength(4);
    for (const [i, link] of links.entries()) expect((await download(t, link)).equals(made[i]!)).toBe(true);
    expect(await used(t, account)).toBeCloseTo(4 * 0.035, 6);
  });

  it('a group that comes back smaller (fewer made, or one refused) is charged for the images it got; the ledger stays balanced', async () => {
    const account = await seedAccount(t.ctx, 5);
    const fewer = await run(t, account, { model: 'imgart-5-0-lite', prompt: 'a set [fewer]', n: 3 });
    expect([fewer.status, fewer.result.images[0].url.length]).toEqual(['completed', 2]);
    const partly = await run(t, account, { model: 'imgart-5-0-lite', prompt: 'a set [output-sensitive]', n: 3 });
    expect([partly.status, partly.result.images[0].url.length]).toEqual(['completed', 2]);
    expect(await used(t, account)).toBeCloseTo(4 * 0.025, 6);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('references go upstream as the URLs the caller gave (one as a string, several as a list, data: URLs as they are)', async () => {
    const account = await seedAccount(t.ctx, 5);
    let before = fake.requests.length;
    expect((await run(t, account, { model: 'imgart-5-0-pro', prompt: 'edit it', image_urls: ['https://example.com/a.png'] })).status).toBe('completed');
    expect(fake.requests[before]!.body.image).toBe('https://example.com/a.png');
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#123456' } }).png().toBuffer();
    const refs = ['https://example.com/a.png', 'https://example.com/b.jpg', `data:image/png;base64,${png.toString('base64')}`];
    before = fake.requests.length;
    expect((await run(t, account, { model: 'imgart-5-0-lite', prompt: 'blend', image_urls: refs })).status).toBe('completed');
    expect(fake.requests[before]!.body.image).toEqual(refs);
  });

  it('response_format b64_json (a channel option): the bytes in the answer are the result', async () => {
    const other = await createTestApp({}, undefined, { workers: true });
    try {
      await addChannel(other, { options: { response_format: 'b64_json', watermark: true } });
      const before = fake.requests.length;
      const task = await run(other, await seedAccount(other.ctx, 5), { model: 'imgart-5-0-lite', prompt: 'inline', n: 2 });
      expect(task.status).toBe('completed');
      expect(fake.requests[before]!.body).toMatchObject({ response_format: 'b64_json', watermark: true });
      const made = fake.images.slice(-2).map((i) => i.bytes);
      for (const [i, link] of (task.result.images[0].url as string[]).entries()) expect((await download(other, link)).equals(made[i]!)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('a result that is not an image (an HTML page labelled image/png) fails the task as upstream_error, charged nothing, nothing stored', async () => {
    const account = await seedAccount(t.ctx, 5);
    fake.servedInstead = Buffer.from('<!DOCTYPE html><html><body><h1>403 Forbidden</h1></body></html>');
    try {
      const task = await run(t, account, { model: 'imgart-5-0-pro', prompt: 'a kite that is a web page', size: '1:1', resolution: '2K' });
      expect([task.status, task.error?.code]).toEqual(['failed', 'upstream_error']);
      expect(task.error.message).toMatch(/not an image/);
      expect(task.result).toBeUndefined();
    } finally {
      fake.servedInstead = undefined;
    }
    expect(await used(t, account)).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("each of Seedream's sensitive-content refusals fails the task with content_policy_violation and charges nothing", async () => {
    const account = await seedAccount(t.ctx, 5);
    const cases = [
      { model: 'imgart-5-0-pro', prompt: 'x [sensitive]' },
      { model: 'imgart-5-0-pro', prompt: 'x', image_urls: ['https://example.com/sensitive.png'] },
      { model: 'imgart-5-0-pro', prompt: 'x [output-sensitive]' },
      { model: 'imgart-5-0-lite', prompt: 'x [output-sensitive]', n: 2 },
    ];
    const codes = ['InputTextSensitiveContentDetected', 'InputImageSensitiveContentDetected', 'OutputImageSensitiveContentDetected', 'OutputImageSensitiveContentDetected'];
    for (const [i, payload] of cases.entries()) {
      const task = await run(t, account, payload);
      if (i === 3) {
        // A group of two with its second refused still has one image.
        expect(task.status).toBe('completed');
        continue;
      }
      expect([task.status, task.error.code, task.error.message]).toEqual(['failed', 'content_policy_violation', expect.stringContaining(codes[i]!)]);
    }
    expect(await used(t, account)).toBeCloseTo(0.025, 6);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a refused key fails the task as upstream_error naming no secret; the connection test makes one real call that generates nothing', async () => {
    const other = await createTestApp({}, undefined, { workers: true });
    try {
      const bad = await addChannel(other, { secret: 'ark-wrong-key-5q5q' });
      const task = await run(other, await seedAccount(other.ctx, 5), { model: 'imgart-5-0-pro', prompt: 'x' });
      expect([task.status, task.error.code, task.error.message]).toEqual(['failed', 'upstream_error', expect.stringContaining('401 AuthenticationError')]);
      expect(JSON.stringify(task)).not.toContain('ark-wrong-key-5q5q');
      const failed = (await other.app.inject({ method: 'POST', url: `/admin/channels/${bad.id}/test`, headers: adminHeaders })).json();
      expect([failed.ok, failed.detail]).toEqual([false, expect.stringContaining("refused the channel's API key")]);
      const good = await addChannel(other);
      const images = fake.images.length;
      const passed = (await other.app.inject({ method: 'POST', url: `/admin/channels/${good.id}/test`, headers: adminHeaders })).json();
      expect([passed.ok, passed.detail]).toEqual([true, 'the API key and seedream-5-0-pro-260628 were accepted (nothing was generated)']);
      expect(fake.images.length).toBe(images);
    } finally {
      await other.close();
    }
  });

  it('the channel form: the type is listed with its options, the asset-library secret key is never shown back', async () => {
    const types = (await t.app.inject({ method: 'GET', url: '/admin/channel-types', headers: adminHeaders })).json();
    const ark = (types.data ?? types).find((e: any) => e.type === 'ark');
    expect(ark.serves).toContain('image');
    expect(Object.keys(ark.options.properties)).toEqual(expect.arrayContaining(['response_format', 'watermark', 'access_key_id', 'secret_access_key', 'region', 'openapi_base_url']));
    const made = await addChannel(t, { models: [], options: { access_key_id: 'AKLT-id', secret_access_key: 'very-secret-sk', region: 'ap-southeast-1', openapi_base_url: 'https://open.byteplusapi.com' } });
    expect(made.options).toMatchObject({ access_key_id: 'AKLT-id', has_secret_access_key: true, region: 'ap-southeast-1' });
    expect(JSON.stringify(made)).not.toContain('very-secret-sk');
  });
});
