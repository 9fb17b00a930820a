import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/core/errors.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { findChannels } from '../src/modules/channels/channels.service.ts';
import { normalizeImageRequest } from '../src/modules/catalog/image-rules.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.ts';

// imggen-2-official's <w>x<h> sizes are billed at the tier their pixel count falls in (the tier's 1:1
// image holds at least as many pixels: docs/pixel-sizes.md), never at the `resolution` field's tier.

const image = (body: Record<string, unknown>) => normalizeImageRequest({ model: 'imggen-2-official', prompt: 'a cat', ...body } as any);

function refused(body: Record<string, unknown>): ApiError {
  try {
    image(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected a 400');
}

describe('a pixel size has the tier of its pixel count', () => {
  it.each([
    ['256x256', '1k'],
    ['1024x1024', '1k'],
    ['1536x864', '2k'],
    ['1536x1024', '2k'],
    ['2048x2048', '2k'],
    ['2064x2048', '4k'],
    ['3840x2160', '4k'],
    ['2160x3840', '4k'],
  ])('%s is a %s image', (size, tier) => {
    expect(image({ size })).toMatchObject({ size, resolution: tier });
    expect(image({ size, resolution: tier.toUpperCase() })).toMatchObject({ size, resolution: tier });
  });

  it('a resolution of another tier is a 400 naming size and resolution', () => {
    for (const [size, resolution] of [['1024x1024', '4k'], ['3840x2160', '1k'], ['2048x2048', '4k']]) {
      const err = refused({ size, resolution });
      expect([err.status, err.type]).toEqual([400, 'invalid_request_error']);
      expect(err.message).toContain(`size ${size}`);
      expect(err.message).toContain(`resolution is "${resolution}"`);
    }
    // An unknown tier is named as before, and a size past 4k's pixels too.
    expect(refused({ size: '1024x1024', resolution: '8k' }).message).toContain('resolution must be one of');
    expect(refused({ size: '3840x2176' }).message).toContain('size: at most');
  });

  it('ratio sizes keep the resolution field as their tier', () => {
    expect(image({ size: '16:9', resolution: '4k' })).toMatchObject({ width: 3840, height: 2160, resolution: '4k' });
    expect(image({ size: 'auto' })).toMatchObject({ width: 1024, height: 1024, resolution: '1k' });
  });
});

describe(`pixel sizes billed through an openai channel [${backendName}]`, () => {
  let fake: FakeOpenAI;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await createTestApp({}, undefined, { workers: true });
    for (const channel of await findChannels(t.ctx.db)) await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
    const created = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'openai', type: 'openai', base_url: fake.url, secret: fake.key, models: ['imggen-2-official'] } });
    expect(created.statusCode).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  async function run(auth: Record<string, string>, payload: Record<string, unknown>) {
    const before = fake.requests.length;
    const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload });
    expect(submit.statusCode).toBe(200);
    const id = submit.json().data[0].task_id;
    const held = await t.ctx.db.selectFrom('tasks').select('hold_amount').where('id', '=', id).executeTakeFirstOrThrow();
    for (let i = 0; i < 600; i++) {
      const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data;
      if (task.status === 'completed' || task.status === 'failed') {
        const row = await t.ctx.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        return { task, row, held: held.hold_amount, seen: fake.requests.slice(before) };
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('task did not end');
  }
  const used = async (auth: Record<string, string>) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: auth })).json().used_balance;

  it('3840x2160 at high quality with no resolution: held, charged and recorded at the 4k/high price; the upstream gets 3840x2160', async () => {
    const account = await seedAccount(t.ctx, 5);
    const price = t.ctx.pricing.imageUnits('imggen-2-official', '4k', 'high', 1);
    expect(price).toBeGreaterThan(t.ctx.pricing.imageUnits('imggen-2-official', '1k', 'high', 1));
    const { task, row, held, seen } = await run(account.auth, { model: 'imggen-2-official', prompt: 'a wide harbour', size: '3840x2160', quality: 'high' });
    expect(task.status).toBe('completed');
    expect(seen.map((s) => s.fields.size)).toEqual(['3840x2160']);
    expect([held, row.cost]).toEqual([price, price]);
    expect(JSON.parse(row.params)).toMatchObject({ size: '3840x2160', resolution: '4k', width: 3840, height: 2160 });
    expect(task.cost).toBe(0.668);
    expect(await used(account.auth)).toBe(0.668);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  }, 60_000);

  it('1024x1024 with resolution 4k is a 400 before any money moves or upstream call; with 1k it is the 1k price', async () => {
    const account = await seedAccount(t.ctx, 5);
    const before = fake.requests.length;
    const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2-official', prompt: 'p', size: '1024x1024', resolution: '4k', quality: 'high' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringMatching(/size 1024x1024.*resolution/) });
    expect(await used(account.auth)).toBe(0);
    const { task, row, held, seen } = await run(account.auth, { model: 'imggen-2-official', prompt: 'p', size: '1024x1024', resolution: '1k', quality: 'high' });
    expect(task.status).toBe('completed');
    expect(fake.requests.length - before).toBe(1);
    expect(seen[0]!.fields.size).toBe('1024x1024');
    const price = t.ctx.pricing.imageUnits('imggen-2-official', '1k', 'high', 1);
    expect([held, row.cost]).toEqual([price, price]);
    expect(await used(account.auth)).toBe(0.167);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});
