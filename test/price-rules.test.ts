import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPricingFile } from '../src/modules/billing/pricing.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A price the catalogue's calls cannot be quoted by is refused where it comes in (PUT /admin/prices,
// a group's prices, PRICING_FILE), with a 400 naming the model and field: before, such a table was
// taken and the calls it priced failed with a 500 or cost next to nothing.

let t: TestApp;
let shipped: { models: Record<string, unknown> };
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
  shipped = (await t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders })).json();
});
afterAll(() => t.close());

const put = (models: Record<string, unknown>) => t.app.inject({ method: 'PUT', url: '/admin/prices', headers: adminHeaders, payload: { models: { ...shipped.models, ...models } } });
const group = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/admin/groups', headers: adminHeaders, payload });
const image = (auth: Record<string, string>, resolution: string) =>
  t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { model: 'imggen-2', prompt: 'a lighthouse', resolution } });

const REFUSED: [string, Record<string, unknown>, string][] = [
  ['no price at all', { 'imggen-2': {} }, 'prices: /models/imggen-2 must have per_image: imggen-2 is billed per image'],
  ['no tier', { 'imggen-2': { per_image: {} } }, 'prices: /models/imggen-2/per_image has no price for 1k, which imggen-2 can be called at'],
  ['a tier missing', { 'imggen-2': { per_image: { '1k': 0.02, '4k': 0.08 } } }, 'prices: /models/imggen-2/per_image has no price for 2k'],
  ['an amount no ledger can hold', { 'imggen-2': { per_image: { '1k': 1e300, '2k': 1, '4k': 1 } } }, 'prices: /models/imggen-2/per_image/1k must be at most 1000 (USD per image), got 1e+300'],
  ['a token price for an image model', { 'imggen-2': { per_token: { input_per_million: 1, output_per_million: 1 } } }, 'prices: /models/imggen-2/per_token: imggen-2 is billed per image (per_image), not by per_token'],
  ['a token price beside the image price', { 'imggen-2': { per_image: { '1k': 1, '2k': 1, '4k': 1 }, per_token: { input_per_million: 1, output_per_million: 1 } } }, '/models/imggen-2/per_token'],
  ['an unknown image tier', { 'imggen-2': { per_image: { '1k': 1, '2k': 1, '4k': 1, junk: 1 } } }, 'prices: /models/imggen-2/per_image/junk is not a tier the catalogue knows'],
  ['an unknown video tier', { 'vidgen-2.0': { per_second: { '480p': 1, '720p': 1, '1080p': 1, '4k': 1, '8k': 1 } } }, 'prices: /models/vidgen-2.0/per_second/8k is not a tier'],
  ['a video tier missing', { 'vidgen-2.0': { per_second: { '480p': 1, '720p': 1, '1080p': 1 } } }, 'prices: /models/vidgen-2.0/per_second has no price for 4k'],
  ['an unknown quality', { 'imggen-2-official': { per_image: { '1k': { auto: 1, ultra: 2 }, '2k': 1, '4k': 1 } } }, 'prices: /models/imggen-2-official/per_image/1k/ultra is not a quality'],
  ['a quality missing, no auto', { 'imggen-2-official': { per_image: { '1k': { low: 1, medium: 1, high: 1 }, '2k': 1, '4k': 1 } } }, 'prices: /models/imggen-2-official/per_image/1k has no price for quality auto'],
  ['an image price for a per-token image model', { 'imglite-3.1': { per_image: { '1k': 0.04 } } }, 'prices: /models/imglite-3.1/per_image: imglite-3.1 is billed per token'],
  ['a token price too high', { 'chatgen-4-haiku': { per_token: { input_per_million: 1, output_per_million: 10_001 } } }, 'prices: /models/chatgen-4-haiku/per_token/output_per_million must be at most 10000 (USD per million tokens)'],
  ['an asset price too high', { 'vidgen-2.0-avatar-review': { per_asset: 1000.5 } }, 'prices: /models/vidgen-2.0-avatar-review/per_asset must be at most 1000'],
  ['a price under an alias', { imgflash: { per_image: { '1k': 1, '2k': 1, '4k': 1 } } }, 'prices: /models/imgflash: imgflash is another name of imgflash-3.1-preview'],
];

describe(`price rules [${backendName}]`, () => {
  it.each(REFUSED)('PUT /admin/prices refuses %s with a 400 naming the model and field', async (_, models, message) => {
    const res = await put(models);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.type).toBe('invalid_request_error');
    expect(res.json().error.message).toContain(message);
  });

  it('the shipped table loads and saves as it is; the refusals above changed nothing', async () => {
    expect(Object.keys(readPricingFile().models).length).toBe(Object.keys(shipped.models).length);
    const account = await seedAccount(t.ctx, 1);
    expect((await image(account.auth, '1k')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders })).json().source).toBe('file');
    expect((await put({})).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/prices', headers: adminHeaders })).statusCode).toBe(200);
  });

  it('PRICING_FILE is checked the same way at start', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'prices-')), 'pricing.json');
    fs.writeFileSync(file, JSON.stringify({ models: { ...shipped.models, 'imggen-2': { per_image: { '1k': 0.02 } } } }));
    expect(() => readPricingFile(file)).toThrow(`PRICING_FILE ${file}: /models/imggen-2/per_image has no price for 2k`);
  });

  it("a group's override must cover the model by itself, and its multiplier keep base prices under the maxima", async () => {
    const gap = await group({ name: 'gap', multiplier: 1, prices: { 'imggen-2': { per_image: { '1k': 0.02 } } } });
    expect(gap.statusCode).toBe(400);
    expect(gap.json().error.message).toBe('prices/imggen-2/per_image has no price for 2k, which imggen-2 can be called at');
    const tokens = await group({ name: 'gap', multiplier: 1, prices: { 'imggen-2': { per_token: { input_per_million: 1, output_per_million: 1 } } } });
    expect(tokens.json().error.message).toContain('prices/imggen-2/per_token: imggen-2 is billed per image');
    const quality = await group({ name: 'gap', multiplier: 1, prices: { 'imggen-2': { per_image: { '1k': { auto: 1, ultra: 2 }, '2k': 1, '4k': 1 } } } });
    expect(quality.json().error.message).toContain('prices/imggen-2/per_image/1k/ultra is not a quality');
    const huge = await group({ name: 'gap', multiplier: 1, prices: { 'vidgen-2.0-mini': { per_second: { '480p': 1e300, '720p': 1, '1080p': 1 } } } });
    expect(huge.json().error.message).toContain('prices/vidgen-2.0-mini/per_second/480p must be at most 1000');
    // The dearest shipped token price (15 USD per million) times 1000 is past 10,000 per million.
    const scaled = await group({ name: 'gap', multiplier: 1000 });
    expect(scaled.statusCode).toBe(400);
    expect(scaled.json().error.message).toMatch(/^multiplier: 1000 times the base prices: \S+ must be at most/);
    expect((await t.app.inject({ method: 'GET', url: '/admin/groups', headers: adminHeaders })).json().data.map((g: { name: string }) => g.name)).not.toContain('gap');

    // A whole override is taken, and every tier its accounts can ask for is quoted by it.
    const whole = await group({ name: 'whole', multiplier: 1, prices: { 'imggen-2': { per_image: { '1k': 0.02, '2k': 0.03, '4k': 0.05 } } } });
    expect(whole.statusCode, whole.body).toBe(200);
    const account = await seedAccount(t.ctx, 1);
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/users/${account.user.id}`, headers: adminHeaders, payload: { group: 'whole' } })).statusCode).toBe(200);
    await t.ctx.groups.sync();
    expect((await image(account.auth, '2k')).statusCode).toBe(200);
    const row = await t.ctx.db.selectFrom('tasks').select('hold_amount').where('user_id', '=', account.user.id).executeTakeFirstOrThrow();
    expect(Number(row.hold_amount)).toBe(30_000);
  });

  it("a new base table that a saved group's multiplier would take past the maxima is refused, naming the group; the table in force stays", async () => {
    const saved = await group({ name: 'tenfold', multiplier: 10 });
    expect(saved.statusCode, saved.body).toBe(200);
    try {
      // 1,500 USD per million times 10 is past 10,000 per million; alone it is under the maximum.
      const dear = await put({ 'chatgen-4-haiku': { per_token: { input_per_million: 1500, output_per_million: 1500 } } });
      expect(dear.statusCode).toBe(400);
      expect(dear.json().error.message).toMatch(/^group tenfold: its multiplier 10 times these prices: chatgen-4-haiku\/per_token\/\w+ must be at most 10000/);
      expect((await t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders })).json().models['chatgen-4-haiku']).toEqual(shipped.models['chatgen-4-haiku']);
      // Under the maxima after the multiplier it is taken.
      expect((await put({ 'chatgen-4-haiku': { per_token: { input_per_million: 900, output_per_million: 900 } } })).statusCode).toBe(200);
      // A PRICING_FILE raised since the group was saved keeps a gateway on this database from starting.
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-prices-')), 'pricing.json');
      const raised = { models: { ...shipped.models, 'chatgen-4-haiku': { per_token: { input_per_million: 1500, output_per_million: 1500 } } } };
      fs.writeFileSync(file, JSON.stringify(raised));
      await t.app.inject({ method: 'DELETE', url: '/admin/prices', headers: adminHeaders });
      await expect(createTestApp({ WORKERS: '0', PRICING_FILE: file }, t.database)).rejects.toThrow(`PRICING_FILE ${file}: group tenfold: its multiplier 10 times these prices: chatgen-4-haiku/per_token`);
      // Lowered to fit, it starts.
      fs.writeFileSync(file, JSON.stringify({ models: { ...raised.models, 'chatgen-4-haiku': { per_token: { input_per_million: 900, output_per_million: 900 } } } }));
      const other = await createTestApp({ WORKERS: '0', PRICING_FILE: file }, t.database);
      await other.close();
    } finally {
      await t.app.inject({ method: 'DELETE', url: '/admin/prices', headers: adminHeaders });
      await t.ctx.db.deleteFrom('groups').where('name', '=', 'tenfold').execute();
      await t.ctx.groups.sync();
    }
  });
});
