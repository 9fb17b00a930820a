import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { Pricing } from '../src/modules/billing/pricing.ts';
import { groupTable } from '../src/modules/groups/group-prices.ts';
import { request } from 'undici';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Customer groups: an account pays its group's prices (the override for a model, else the base price
// times the multiplier) for every quote and settlement, text and tasks alike; a model outside the
// group's list is a 403 before anything is held; GET /v1/models shows what the account is charged.

let t: TestApp;
// A second gateway process on the same database: a change made here must reach its calls within a second.
let other: GatewayProcess;
beforeAll(async () => {
  t = await createTestApp({}, undefined, { workers: true });
  other = await startGateway({ ...t.database.env, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ADMIN_TOKEN, WORKERS: '0' });
}, 60_000);
afterAll(async () => {
  await stopAllGateways();
  await t.close();
});

type Account = Awaited<ReturnType<typeof seedAccount>>;

async function saveGroup(body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/admin/groups', headers: adminHeaders, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function accountIn(group: string | undefined): Promise<Account> {
  const account = await seedAccount(t.ctx, 50);
  if (group) {
    const res = await t.app.inject({ method: 'PATCH', url: `/admin/users/${account.user.id}`, headers: adminHeaders, payload: { group } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().group).toBe(group);
  }
  return account;
}

/** The balance as the account sees it: what text money's open holds (floats) have not spent counts as its own. */
async function balanceOf(a: Account) {
  const held = (await t.ctx.textMoney.pendingFor({ accountIds: [a.user.id] })).get(a.user.id)?.unspent ?? 0;
  return Number((await getUser(t.ctx.db, a.user.id))!.balance) + held;
}

/** One /v1/messages call on the simulator; what it cost, from its usage row, and what left the balance. */
async function textCall(a: Account, model = 'chatgen-4-sonnet') {
  const before = await balanceOf(a);
  const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': a.key }, payload: { model, max_tokens: 64, messages: [{ role: 'user', content: 'tell me about groups' }] } });
  expect(res.statusCode, res.body).toBe(200);
  await t.ctx.textMoney.flush();
  const usage = await t.ctx.db.selectFrom('usage').selectAll().where('key_id', '=', a.keyId).orderBy('id', 'desc').executeTakeFirstOrThrow();
  return { cost: Number(usage.cost), input: usage.input_tokens, output: usage.output_tokens, spent: before - (await balanceOf(a)) };
}

/** Submits a task and waits for it to end (as `status`); its settled cost and what left the balance. */
async function task(a: Account, url: string, payload: Record<string, unknown>, status = 'completed') {
  const before = await balanceOf(a);
  const res = await t.app.inject({ method: 'POST', url, headers: a.auth, payload });
  expect(res.statusCode, res.body).toBe(200);
  const data = res.json().data;
  const id = (Array.isArray(data) ? data[0].task_id : data.id) as string;
  for (let i = 0; i < 300; i++) {
    const row = await t.ctx.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    if (row.status === 'completed' || row.status === 'failed') {
      expect(row.status).toBe(status);
      return { hold: Number(row.hold_amount), cost: Number(row.cost), spent: before - (await balanceOf(a)), input: row.input_tokens, output: row.output_tokens };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${id} did not end`);
}

const IMAGE = { model: 'imggen-2', prompt: 'a lighthouse at dusk' };
const TOKEN_IMAGE = { model: 'imglite-3.1', prompt: 'a lighthouse at dawn' };
const VIDEO = { model: 'vidgen-2.0-mini', prompt: 'waves', duration: 5, resolution: '480p' };

describe('a group price table', () => {
  it('scales every price, token counts stay; an override replaces the whole model', () => {
    const base = { models: { t: { per_token: { input_per_million: 2, output_per_million: 8, cache_write_per_million: 2.5, above_tokens: { threshold: 1000, input_per_million: 4, output_per_million: 12, cache_read_per_million: 1 } } }, i: { per_image: { '1k': { auto: 0.04, high: 0.1 } }, output_tokens_per_image: 100 }, a: { per_asset: 0.02 } } };
    const table = groupTable(base, { name: 'g', multiplier: 0.25, prices: { a: { per_second: { '480p': 1 } } } });
    expect(table.models).toEqual({
      t: { per_token: { input_per_million: 0.5, output_per_million: 2, cache_write_per_million: 0.625, above_tokens: { threshold: 1000, input_per_million: 1, output_per_million: 3, cache_read_per_million: 0.25 } } },
      i: { per_image: { '1k': { auto: 0.01, high: 0.025 } }, output_tokens_per_image: 100 },
      a: { per_second: { '480p': 1 } },
    });
    expect(groupTable(base, { name: 'default', multiplier: 1, prices: {} })).toBe(base);
  });
});

describe(`customer groups [${backendName}]`, () => {
  let plain: Account;
  let half: Account;
  beforeAll(async () => {
    await saveGroup({ name: 'half', multiplier: 0.5 });
    [plain, half] = await Promise.all([accountIn(undefined), accountIn('half')]);
  });

  it('the same text call costs half in a 0.5 group', async () => {
    const a = await textCall(plain);
    const b = await textCall(half);
    expect([b.input, b.output]).toEqual([a.input, a.output]);
    expect(a.cost).toBe(3 * a.input + 15 * a.output);
    expect(b.cost).toBe(Math.ceil(a.cost / 2));
    expect([a.spent, b.spent]).toEqual([a.cost, b.cost]);
  });

  it('the same image, video and avatar tasks cost half (per image, per token, per second, per asset)', async () => {
    const image = await Promise.all([task(plain, '/v1/images/generations', IMAGE), task(half, '/v1/images/generations', IMAGE)]);
    expect(image.map((r) => r.cost)).toEqual([20_000, 10_000]);
    expect(image.map((r) => r.spent)).toEqual([20_000, 10_000]);

    const tokens = await Promise.all([task(plain, '/v1/images/generations', TOKEN_IMAGE), task(half, '/v1/images/generations', TOKEN_IMAGE)]);
    const [p, h] = tokens;
    expect([h!.input, h!.output]).toEqual([p!.input, p!.output]);
    // 0.3 and 30 USD per million tokens; halved 0.15 and 15, each total rounded up once.
    expect(p!.cost).toBe(Math.ceil(0.3 * p!.input! + 30 * p!.output!));
    expect(h!.cost).toBe(Math.ceil(0.15 * h!.input! + 15 * h!.output!));
    expect(h!.hold).toBe(Math.ceil(p!.hold / 2));
    expect(tokens.map((r) => r.spent)).toEqual(tokens.map((r) => r.cost));

    const video = await Promise.all([task(plain, '/v1/videos/generations', VIDEO), task(half, '/v1/videos/generations', VIDEO)]);
    expect(video.map((r) => r.cost)).toEqual([50_000, 25_000]);
    expect(video.map((r) => r.spent)).toEqual([50_000, 25_000]);

    // Work worth less than the hold (one of two assets passed review) is billed at the group's price too.
    const avatar = (name: string) => ({ group: { name }, assets: [{ url: 'https://cdn.example.com/a.png', name: 'a' }, { url: 'https://cdn.example.com/b.png', name: 'b [sim:reject]' }] });
    const review = await Promise.all([plain, half].map((a) => task(a, '/v1/seedance2/private-avatar', avatar(a.user.id), 'failed')));
    expect(review.map((r) => r.hold)).toEqual([20_000, 10_000]);
    expect(review.map((r) => r.cost)).toEqual([10_000, 5_000]);
    expect(review.map((r) => r.spent)).toEqual([10_000, 5_000]);
  });

  it("an override beats the multiplier; GET /v1/models shows each account's own prices, which are what it is charged", async () => {
    await saveGroup({ name: 'dear-images', multiplier: 0.5, prices: { 'imggen-2': { per_image: { '1k': 0.1, '2k': 0.2, '4k': 0.4 } } } });
    const dear = await accountIn('dear-images');
    expect((await task(dear, '/v1/images/generations', IMAGE)).cost).toBe(100_000);
    expect((await task(dear, '/v1/videos/generations', VIDEO)).cost).toBe(25_000);

    const models = async (a: Account) => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/models', headers: a.auth });
      expect(res.statusCode).toBe(200);
      return Object.fromEntries(res.json().data.map((m: { id: string; pricing: unknown }) => [m.id, m.pricing]));
    };
    const [forPlain, forHalf, forDear] = await Promise.all([models(plain), models(half), models(dear)]);
    expect(forPlain['imggen-2']).toEqual({ per_image: { '1k': 0.02, '2k': 0.04, '4k': 0.08 } });
    expect(forHalf['imggen-2']).toEqual({ per_image: { '1k': 0.01, '2k': 0.02, '4k': 0.04 } });
    expect(forDear['imggen-2']).toEqual({ per_image: { '1k': 0.1, '2k': 0.2, '4k': 0.4 } });
    expect(forHalf['chatgen-4-sonnet']).toMatchObject({ per_token: { input_per_million: 1.5, output_per_million: 7.5 } });
    // What the listed prices quote is what each account was charged above.
    const listed = (table: Record<string, unknown>) => new Pricing({ models: table as never });
    expect(listed(forHalf).imageUnits('imggen-2', '1k', undefined, 1)).toBe(10_000);
    expect(listed(forDear).imageUnits('imggen-2', '1k', undefined, 1)).toBe(100_000);
    expect(listed(forHalf).videoUnits('vidgen-2.0-mini', '480p', 5)).toBe(25_000);
    const call = await textCall(half);
    expect(listed(forHalf).usageCost('chatgen-4-sonnet', { input: call.input, cache_read: 0, cache_write: 0, output: call.output }).total).toBe(call.cost);
  });

  it('a model outside the group list is a 403 before anything is held; the list narrows /v1/models', async () => {
    await saveGroup({ name: 'haiku-only', multiplier: 1, models: ['chatgen-4-haiku'], prices: { 'chatgen-4-haiku': { per_token: { input_per_million: 1, output_per_million: 2 } } } });
    const narrow = await accountIn('haiku-only');
    const refused = [
      await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': narrow.key }, payload: { model: 'chatgen-4-sonnet', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } }),
      await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: narrow.auth, payload: { model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'hi' }] } }),
      await t.app.inject({ method: 'POST', url: '/v1/responses', headers: narrow.auth, payload: { model: 'chatgen-4-sonnet', input: 'hi' } }),
      await t.app.inject({ method: 'POST', url: '/gemini/v1beta/models/textgen-2.5-flash:generateContent', headers: { 'x-goog-api-key': narrow.key }, payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }),
      // Counting tokens is free, but a model the group may not use is not counted either.
      await t.app.inject({ method: 'POST', url: '/v1/messages/count_tokens', headers: { 'x-api-key': narrow.key }, payload: { model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'hi' }] } }),
      await t.app.inject({ method: 'POST', url: '/gemini/v1beta/models/textgen-2.5-pro:countTokens', headers: { 'x-goog-api-key': narrow.key }, payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }),
      await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:countTokens', headers: narrow.auth, payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }),
      await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: narrow.auth, payload: IMAGE }),
      await t.app.inject({ method: 'POST', url: '/v1/videos/generations', headers: narrow.auth, payload: VIDEO }),
    ];
    for (const res of refused) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.body).toContain("account's group may not use the model");
    }
    await t.ctx.textMoney.flush();
    const rows = await t.ctx.db.selectFrom('ledger').select('kind').where('user_id', '=', narrow.user.id).execute();
    expect(rows.map((r) => r.kind)).toEqual(['topup']);
    expect(await t.ctx.db.selectFrom('text_holds').select('call_id').where('user_id', '=', narrow.user.id).execute()).toEqual([]);
    expect(await t.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', narrow.user.id).execute()).toEqual([]);
    expect(await balanceOf(narrow)).toBe(50_000_000);

    const call = await textCall(narrow, 'chatgen-4-haiku');
    expect(call.cost).toBe(Math.ceil(1 * call.input + 2 * call.output));
    const listed = (await t.app.inject({ method: 'GET', url: '/v1/models', headers: narrow.auth })).json().data;
    expect(listed.map((m: { id: string }) => m.id)).toEqual(['chatgen-4-haiku']);
    expect(listed[0].pricing).toEqual({ per_token: { input_per_million: 1, output_per_million: 2 } });
  });

  it("a group's models take aliases as a key's do, stored as their ids", async () => {
    const saved = await saveGroup({ name: 'aliases', multiplier: 1, models: ['imggen-2-ext', 'imggen-2', 'imgpro-ext'] });
    expect(saved.models).toEqual(['imggen-2', 'imgpro-3-preview']);
    const account = await accountIn('aliases');
    for (const model of ['imggen-2', 'imggen-2-ext']) expect((await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { ...IMAGE, model } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { ...IMAGE, model: 'imgart-5-0-pro' } })).statusCode).toBe(403);
  });

  it('a moved account pays its new group on its next call', async () => {
    const mover = await accountIn(undefined);
    const first = await textCall(mover);
    const moved = await t.app.inject({ method: 'PATCH', url: `/admin/users/${mover.user.id}`, headers: adminHeaders, payload: { group: 'half' } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await textCall(mover)).cost).toBe(Math.ceil(first.cost / 2));
    const back = await t.app.inject({ method: 'PATCH', url: `/admin/users/${mover.user.id}`, headers: adminHeaders, payload: { group: 'default' } });
    expect(back.json().group).toBe('default');
    expect((await textCall(mover)).cost).toBe(first.cost);
  });

  it('on another process, a moved account and a changed group are priced anew within about a second', async () => {
    await saveGroup({ name: 'changing', multiplier: 1 });
    const mover = await accountIn(undefined);
    let calls = 0;
    /** A text call on the other process; its cost once that process has written its usage row. */
    const callThere = async () => {
      const res = await request(`${other.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': mover.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chatgen-4-sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'tell me about groups' }] }),
      });
      expect(res.statusCode, await res.body.text()).toBe(200);
      calls++;
      for (let i = 0; i < 100; i++) {
        const rows = await t.ctx.db.selectFrom('usage').select('cost').where('key_id', '=', mover.keyId).orderBy('id', 'desc').execute();
        if (rows.length === calls) return Number(rows[0]!.cost);
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the other process wrote no usage row');
    };
    /** How long after `change` the other process's calls cost `expected`. */
    const takes = async (change: () => Promise<unknown>, expected: number) => {
      await change();
      const from = Date.now();
      while ((await callThere()) !== expected) {
        expect(Date.now() - from).toBeLessThan(3000);
        await new Promise((r) => setTimeout(r, 50));
      }
      return Date.now() - from;
    };
    const full = await callThere();
    const moved = await takes(async () => {
      await t.app.inject({ method: 'PATCH', url: `/admin/users/${mover.user.id}`, headers: adminHeaders, payload: { group: 'changing' } });
      await saveGroup({ name: 'changing', multiplier: 0.5 });
    }, Math.ceil(full / 2));
    const changed = await takes(() => saveGroup({ name: 'changing', multiplier: 2 }), full * 2);
    // The groups are re-read every second and keys every KEY_CACHE_POLL_MS (or at once over Redis); a little slack for the call itself.
    expect(moved).toBeLessThan(1600);
    expect(changed).toBeLessThan(1600);
  });

  it('admin: lists groups, refuses an unknown group, field or price, and leaves default alone', async () => {
    const list = (await t.app.inject({ method: 'GET', url: '/admin/groups', headers: adminHeaders })).json().data;
    expect(list.find((g: { name: string }) => g.name === 'default')).toEqual({ name: 'default', multiplier: 1, models: [], prices: {} });
    expect(list.find((g: { name: string }) => g.name === 'half')).toEqual({ name: 'half', multiplier: 0.5, models: [], prices: {} });

    const unknownGroup = await t.app.inject({ method: 'PATCH', url: `/admin/users/${plain.user.id}`, headers: adminHeaders, payload: { group: 'nosuch' } });
    expect(unknownGroup.statusCode).toBe(400);
    expect(unknownGroup.json().error.message).toContain('nosuch');
    const unknownField = await t.app.inject({ method: 'PATCH', url: `/admin/users/${plain.user.id}`, headers: adminHeaders, payload: { group: 'half', tier: 'gold' } });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().error.message).toContain('tier');
    expect((await getUser(t.ctx.db, plain.user.id))!.group_name).toBe('default');

    const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/admin/groups', headers: adminHeaders, payload });
    const badPrice = await post({ name: 'x', multiplier: 1, prices: { 'imggen-2': { per_token: { input_per_million: 1, output_per_million: 1, bogus: 1 } } } });
    expect(badPrice.statusCode).toBe(400);
    expect(badPrice.json().error.message).toContain('bogus');
    expect((await post({ name: 'x', multiplier: 1, prices: { 'no-model': { per_asset: 1 } } })).json().error.message).toContain('no-model');
    expect((await post({ name: 'x', multiplier: 0 })).statusCode).toBe(400);
    expect((await post({ name: 'default', multiplier: 2 })).statusCode).toBe(400);
    expect((await post({ name: 'x', multiplier: 1, models: ['nope-1'] })).json().error.message).toContain('nope-1');

    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});
