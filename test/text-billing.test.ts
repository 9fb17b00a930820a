import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptTokens, type UsageClasses } from '../src/core/usage.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { usageCsv } from '../src/modules/console/usage-export.ts';
import { imageTokens } from '../src/lib/tokens/image-tokens.ts';
import { readPricingFile } from '../src/modules/billing/pricing.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeGeminiText, type FakeGeminiText } from './support/fake-gemini-text.ts';
import { startFakeMessagesText, type FakeMessagesText } from './support/fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './support/fake-openai-text.ts';

// A text call pays what its upstream reported, class by class (uncached input, cached reads, cache
// writes, output with its reasoning), never capped at the hold: through each channel type (messages,
// openai chat and responses, gemini, native) and each inbound surface (messages, chat completions,
// responses, native /v1beta, bare gemini), streamed and not. Every upstream here reports far more than "hi" with 16 output
// tokens could hold.

let t: TestApp;
let base: string;
let messagesFake: FakeMessagesText;
let openaiFake: FakeOpenAIText;
let geminiFake: FakeGeminiText;
let nativeFake: FakeGeminiText;

const CHANNELS = [
  { type: 'messages', model: 'chatgen-4-haiku', theirs: 'messages-fake-small' },
  { type: 'openai', model: 'chatgen-4-sonnet', theirs: 'gpt-fake-mini' },
  { type: 'gemini', model: 'textgen-2.5-pro', theirs: 'gemini-fake-flash' },
  { type: 'native', model: 'textgen-2.5-flash', theirs: 'gemini-fake-flash' },
] as const;

/** What each fake reports, and the classes that makes. */
const EXPECTED: Record<(typeof CHANNELS)[number]['type'], UsageClasses> = {
  messages: { input: 5000, cache_read: 30_000, cache_write: 2000, output: 700 },
  openai: { input: 5000, cache_read: 4000, cache_write: 0, output: 1500, reasoning: 600 },
  gemini: { input: 1100, cache_read: 4000, cache_write: 0, output: 30_300, reasoning: 30_000 },
  native: { input: 1100, cache_read: 4000, cache_write: 0, output: 30_300, reasoning: 30_000 },
};

function reportFullUsage(): void {
  messagesFake.usage = { input_tokens: 5000, cache_read_input_tokens: 30_000, cache_creation_input_tokens: 2000, output_tokens: 700 };
  openaiFake.usage = { prompt_tokens: 9000, prompt_tokens_details: { cached_tokens: 4000 }, completion_tokens: 1500, completion_tokens_details: { reasoning_tokens: 600 } };
  for (const fake of [geminiFake, nativeFake]) {
    fake.usage = { promptTokenCount: 5000, cachedContentTokenCount: 4000, toolUsePromptTokenCount: 100, candidatesTokenCount: 300, thoughtsTokenCount: 30_000 };
  }
}

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  [messagesFake, openaiFake, geminiFake, nativeFake] = await Promise.all([startFakeMessagesText(), startFakeOpenAIText(), startFakeGeminiText(), startFakeGeminiText('fake-native-key')]);
  nativeFake.bearer = true;
  const fakes = { messages: messagesFake, openai: openaiFake, gemini: geminiFake, native: nativeFake };
  for (const { type, model, theirs } of CHANNELS) {
    const fake = fakes[type];
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: `${type}-billing`, type, base_url: fake.url, secret: fake.key, models: [model], model_mapping: { [model]: theirs }, priority: 10 } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const taken = new Set<string>(CHANNELS.map((c) => c.model));
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !taken.has(m)) } });
});
afterAll(async () => {
  await Promise.all([messagesFake?.close(), openaiFake?.close(), geminiFake?.close(), nativeFake?.close()]);
  await t?.close();
});

type Surface = 'messages' | 'chat' | 'responses' | 'native' | 'gemini';
const SURFACES: Surface[] = ['messages', 'chat', 'responses', 'native', 'gemini'];

/** "hi" with 16 output tokens, on a surface, streamed or not. */
function call(surface: Surface, model: string, stream: boolean, key: string) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (surface === 'messages') return { url: '/v1/messages', headers, body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream } : {}) } };
  if (surface === 'chat') return { url: '/v1/chat/completions', headers, body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream, stream_options: { include_usage: true } } : {}) } };
  if (surface === 'responses') return { url: '/v1/responses', headers, body: { model, max_output_tokens: 16, input: 'hi', ...(stream ? { stream } : {}) } };
  const prefix = surface === 'native' ? '/v1beta' : '/gemini/v1beta';
  const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { url: `${prefix}/models/${model}:${method}`, headers, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 16 } } };
}

/** Over a real port: a stream is read as the caller reads it. */
async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await request(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { statusCode: res.statusCode, body: await res.body.text() };
}

async function send(surface: Surface, model: string, stream: boolean, key: string) {
  const { url, headers, body } = call(surface, model, stream, key);
  return post(url, headers, body);
}

async function usageRows(userId: string, count: number) {
  const read = () => t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  let rows = await read();
  for (let i = 0; i < 200 && rows.length < count; i++) {
    await new Promise((r) => setTimeout(r, 20));
    rows = await read();
  }
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' || (typeof v === 'string' && /^\d+$/.test(v) && k !== 'request_id') ? Number(v) : v])) as Record<string, any>);
}

const balanceOf = async (key: string) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: { authorization: `Bearer ${key}` } })).json();

/** The usage the answer shows, in the surface's own format. */
function shownUsage(surface: Surface, stream: boolean, body: string): Record<string, unknown> {
  if (!stream) {
    const json = JSON.parse(body);
    return surface === 'messages' || surface === 'chat' || surface === 'responses' ? json.usage : surface === 'native' ? json.data.usageMetadata : json.usageMetadata;
  }
  const datas = body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));
  // message_start's usage, then what message_delta says (a messages upstream's own delta may say only the output).
  if (surface === 'messages') return { ...datas.find((d) => d.type === 'message_start').message.usage, ...datas.find((d) => d.type === 'message_delta').usage };
  if (surface === 'chat') return datas.filter((d) => d.usage).at(-1).usage;
  if (surface === 'responses') return datas.find((d) => d.type === 'response.completed').response.usage;
  return datas.filter((d) => d.usageMetadata).at(-1).usageMetadata;
}

describe(`every token class, never capped [${backendName}]`, () => {
  for (const channel of CHANNELS) {
    it(`${channel.type} channel: each surface, streamed and not, pays the upstream's usage by class`, async () => {
      reportFullUsage();
      const account = await seedAccount(t.ctx, 100);
      const expected = EXPECTED[channel.type];
      const cost = t.ctx.pricing.usageCost(channel.model, expected);
      // What "hi" with 16 output tokens holds is far less: the settlement is not capped by it.
      expect(cost.total).toBeGreaterThan(10 * t.ctx.pricing.tokenUnits(channel.model, 100, 16));
      let calls = 0;
      for (const surface of SURFACES) {
        for (const stream of [false, true]) {
          const res = await send(surface, channel.model, stream, account.key);
          expect(res.statusCode, `${surface} ${stream}: ${res.body}`).toBe(200);
          calls++;
          const shown = shownUsage(surface, stream, res.body);
          if (surface === 'messages') expect(shown).toMatchObject({ input_tokens: expected.input, cache_read_input_tokens: expected.cache_read, cache_creation_input_tokens: expected.cache_write, output_tokens: expected.output });
          if (surface === 'chat') expect(shown).toMatchObject({ prompt_tokens: promptTokens(expected), prompt_tokens_details: { cached_tokens: expected.cache_read }, completion_tokens: expected.output });
          if (surface === 'responses') expect(shown).toMatchObject({ input_tokens: promptTokens(expected), input_tokens_details: { cached_tokens: expected.cache_read }, output_tokens: expected.output });
          if (surface === 'responses' && stream) {
            // The streamed answer is stored (store is the API's default) from the stream's own last event.
            const completed = res.body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((d) => d.type === 'response.completed').response;
            const stored = await t.app.inject({ method: 'GET', url: `/v1/responses/${completed.id}`, headers: { authorization: `Bearer ${account.key}` } });
            expect(stored.statusCode, stored.body).toBe(200);
            expect(stored.json()).toMatchObject({ id: completed.id, usage: completed.usage });
          }
          if (surface === 'native' || surface === 'gemini') {
            // A gemini upstream's own usageMetadata (same format) keeps its tool-use prompt apart; both are input.
            expect(Number(shown.promptTokenCount) + Number(shown.toolUsePromptTokenCount ?? 0)).toBe(promptTokens(expected));
            expect(shown).toMatchObject({ cachedContentTokenCount: expected.cache_read, candidatesTokenCount: expected.output - (expected.reasoning ?? 0) });
          }
        }
      }
      // An openai channel takes Responses calls on its own /v1/responses, as they came.
      if (channel.type === 'openai') expect(openaiFake.requests.filter((r) => r.path === '/v1/responses')).toHaveLength(2);
      await t.ctx.textMoney.flush();
      const rows = await usageRows(account.user.id, calls);
      expect(rows).toHaveLength(calls);
      for (const row of rows) {
        expect(row).toMatchObject({
          status: 'ok',
          input_tokens: expected.input,
          cache_read_tokens: expected.cache_read,
          cache_write_tokens: expected.cache_write,
          output_tokens: expected.output,
          reasoning_tokens: expected.reasoning ?? 0,
          cost: cost.total,
          input_cost: cost.input,
          cache_read_cost: cost.cache_read,
          cache_write_cost: cost.cache_write,
          output_cost: cost.output,
        });
      }
      // Every call pays its full cost, the CSV's costs (and its classes' costs) sum to the used balance, and the books balance.
      await t.ctx.textMoney.flush();
      const { used_balance } = await balanceOf(account.key);
      expect(Math.round(used_balance * 1e6)).toBe(calls * cost.total);
      const csv = (await usageCsv(t.ctx.db, { userId: account.user.id }, { billingUnit: 'usd', creditsPerUsd: 1000 }).toArray()).join('').trim().split('\r\n');
      const header = csv[0]!.split(',');
      const sum = (column: string) => csv.slice(1).reduce((total, row) => total + Math.round(Number(row.split(',')[header.indexOf(column)]) * 1e6), 0);
      expect(csv).toHaveLength(calls + 1);
      expect(sum('cost')).toBe(Math.round(used_balance * 1e6));
      expect(['input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost'].reduce((total, c) => total + sum(c), 0)).toBe(sum('cost'));
      expect(sum('cache_read_tokens') / 1e6).toBe(calls * expected.cache_read);
      expect(await auditLedger(t.ctx.db)).toEqual([]);
    });
  }

  it('cached reads, cache writes and reasoning cost their own prices; a class without one costs the input price', () => {
    const sonnet = t.ctx.pricing.usageCost('chatgen-4-sonnet', { input: 1_000_000, cache_read: 1_000_000, cache_write: 1_000_000, output: 1_000_000, reasoning: 500_000 });
    expect(sonnet).toEqual({ input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000, output: 15_000_000, total: 22_050_000 });
    // textgen-2.5-pro has no cache-write price: its input price.
    expect(t.ctx.pricing.usageCost('textgen-2.5-pro', { input: 0, cache_read: 0, cache_write: 100_000, output: 0 }).total).toBe(125_000);
  });
});

describe(`the overrun [${backendName}]`, () => {
  it('$0.001 left, an upstream reporting $0.01: the account ends at -$0.009, the ledger says why, the next call is a 402, a top-up brings it back', async () => {
    // 12,500 uncached input tokens at $0.80 a million: $0.01.
    messagesFake.usage = { input_tokens: 12_500, output_tokens: 0 };
    const account = await seedAccount(t.ctx, 0.001);
    const res = await send('messages', 'chatgen-4-haiku', false, account.key);
    expect(res.statusCode, res.body).toBe(200);
    await t.ctx.textMoney.flush();
    expect(await balanceOf(account.key)).toMatchObject({ remain_balance: -0.009, used_balance: 0.01 });
    const overrun = await t.ctx.db.selectFrom('ledger').selectAll().where('user_id', '=', account.user.id).where('kind', '=', 'overrun').execute();
    expect(overrun).toHaveLength(1);
    expect(Number(overrun[0]!.balance_delta)).toBeLessThan(0);
    expect(overrun[0]!.note).toMatch(/used 10000 units/);
    expect((await send('messages', 'chatgen-4-haiku', false, account.key)).statusCode).toBe(402);
    const topUp = await t.app.inject({ method: 'POST', url: `/admin/users/${account.user.id}/topup`, headers: adminHeaders, payload: { amount: 1 } });
    expect(topUp.statusCode, topUp.body).toBe(200);
    messagesFake.usage = { input_tokens: 11, output_tokens: 3 };
    expect((await send('messages', 'chatgen-4-haiku', false, account.key)).statusCode).toBe(200);
    await t.ctx.textMoney.flush();
    expect((await balanceOf(account.key)).remain_balance).toBeGreaterThan(0.99);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a limited key goes below zero the same way, and its next call is a 402', async () => {
    messagesFake.usage = { input_tokens: 12_500, output_tokens: 0 };
    const account = await seedAccount(t.ctx, 5, { quota: 0.001 });
    expect((await send('messages', 'chatgen-4-haiku', true, account.key)).statusCode).toBe(200);
    await t.ctx.textMoney.flush();
    const key = await t.ctx.db.selectFrom('api_keys').select(['quota_remain', 'quota_used']).where('id', '=', account.keyId).executeTakeFirstOrThrow();
    expect({ remain: Number(key.quota_remain), used: Number(key.quota_used) }).toEqual({ remain: -9000, used: 10_000 });
    expect((await send('messages', 'chatgen-4-haiku', true, account.key)).statusCode).toBe(402);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});

describe(`the hold counts everything sent upstream [${backendName}]`, () => {
  const toolCall = (content: string, tools = false) => ({
    model: 'chatgen-4-sonnet',
    max_tokens: 16,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content },
    ],
    ...(tools ? { tools: [{ type: 'function', function: { name: 'read', description: content, parameters: { type: 'object' } } }] } : {}),
  });
  const chat = (key: string, body: unknown) => post('/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body);

  it('tool turns and tool definitions are held: $0.01 of quota cannot send 60,000 words of them', async () => {
    const account = await seedAccount(t.ctx, 10, { quota: 0.01 });
    const before = openaiFake.requests.length;
    expect((await chat(account.key, toolCall('word '.repeat(60_000)))).statusCode).toBe(402);
    expect((await chat(account.key, { ...toolCall('ok', true), tools: [{ type: 'function', function: { name: 'read', description: 'word '.repeat(60_000), parameters: { type: 'object' } } }] })).statusCode).toBe(402);
    expect(openaiFake.requests.length).toBe(before);
    // A small one goes through.
    openaiFake.usage = { prompt_tokens: 40, completion_tokens: 2 };
    expect((await chat(account.key, toolCall('ok'))).statusCode).toBe(200);
  });

  it('an image counts at the vendors\' rate for its size, not a flat 258', () => {
    const png = (width: number, height: number) => {
      const head = Buffer.alloc(33);
      head.writeUInt32BE(0x89504e47, 0);
      head.writeUInt32BE(0x0d0a1a0a, 4);
      head.writeUInt32BE(13, 8);
      head.write('IHDR', 12, 'latin1');
      head.writeUInt32BE(width, 16);
      head.writeUInt32BE(height, 20);
      return head.toString('base64');
    };
    expect(imageTokens(png(200, 200))).toBe(258);
    // 2000 x 2000: ~1,600 tokens on the messages API (scaled down), 9 tiles on the Gemini API.
    expect(imageTokens(png(2000, 2000))).toBe(9 * 258);
    expect(imageTokens(png(1092, 1092))).toBeGreaterThanOrEqual(1590);
    expect(imageTokens('not an image')).toBeGreaterThanOrEqual(1500);
  });

  it("and they count against the model's input limit", async () => {
    const account = await seedAccount(t.ctx, 100);
    const res = await chat(account.key, toolCall('word '.repeat(250_000)));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('context window');
  });
});

describe(`counts of any size [${backendName}]`, () => {
  it('3,000,000,000 input tokens are stored and charged in full', async () => {
    messagesFake.usage = { input_tokens: 3_000_000_000, output_tokens: 5 };
    try {
      const account = await seedAccount(t.ctx, 10);
      expect((await send('messages', 'chatgen-4-haiku', false, account.key)).statusCode).toBe(200);
      await t.ctx.textMoney.flush();
      const [row] = await usageRows(account.user.id, 1);
      expect(row).toMatchObject({ status: 'ok', input_tokens: 3_000_000_000, cost: 2_400_000_020 });
      expect((await balanceOf(account.key)).remain_balance).toBeCloseTo(10 - 2400.00002, 6);
      expect(await auditLedger(t.ctx.db)).toEqual([]);
    } finally {
      messagesFake.usage = { input_tokens: 11, output_tokens: 3 };
    }
  });
});

describe(`prices [${backendName}]`, () => {
  it('a price table with an unknown field is a 400 naming it', async () => {
    const table = (await t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders })).json();
    const models = structuredClone(table.models ?? table.data?.models);
    models['chatgen-4-haiku'].per_token.cached_input_per_million = 0.08;
    const res = await t.app.inject({ method: 'PUT', url: '/admin/prices', headers: adminHeaders, payload: { models } });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('/models/chatgen-4-haiku/per_token/cached_input_per_million');
  });

  it('a PRICING_FILE with an unknown field is refused at start, naming it', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'prices-')), 'pricing.json');
    const shipped = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'config', 'pricing.json'), 'utf8'));
    shipped.models['chatgen-4-haiku'].per_token.above_tokens = { threshold: 100, input_per_million: 1, output_per_million: 5, cache_write_per_million: 2 };
    fs.writeFileSync(file, JSON.stringify(shipped));
    expect(() => readPricingFile(file)).toThrow(`PRICING_FILE ${file}: /models/chatgen-4-haiku/per_token/above_tokens/cache_write_per_million is not a price field`);
  });

  it('above_tokens prices a whole call whose prompt exceeds its threshold, and only then', () => {
    const at = (input: number, cache_read: number) => t.ctx.pricing.usageCost('textgen-2.5-pro', { input, cache_read, cache_write: 0, output: 1000 });
    // 200,000 prompt tokens: the base tier ($1.25 in, $0.125 cached, $10 out).
    expect(at(150_000, 50_000).total).toBe(150_000 * 1.25 + 50_000 * 0.125 + 1000 * 10);
    // 200,001: the whole call at the long-context tier ($2.50 in, $0.25 cached, $15 out).
    expect(at(150_001, 50_000).total).toBe(Math.ceil(150_001 * 2.5 + 50_000 * 0.25 + 1000 * 15));
  });
});

describe(`cuts and callers that leave [${backendName}]`, () => {
  it('an upstream that cuts a stream right after message_start is billed the input it reported', async () => {
    messagesFake.usage = { input_tokens: 5000, cache_read_input_tokens: 1000, output_tokens: 1 };
    messagesFake.cut = 'after-start';
    try {
      for (const surface of ['messages', 'chat'] as const) {
        const account = await seedAccount(t.ctx, 10);
        await send(surface, 'chatgen-4-haiku', true, account.key);
        await t.ctx.textMoney.flush();
        const [row] = await usageRows(account.user.id, 1);
        expect(row).toMatchObject({ status: 'aborted', input_tokens: 5000, cache_read_tokens: 1000 });
        expect(row!.cost).toBeGreaterThanOrEqual(t.ctx.pricing.usageCost('chatgen-4-haiku', { input: 5000, cache_read: 1000, cache_write: 0, output: 0 }).total);
      }
    } finally {
      messagesFake.cut = undefined;
    }
  });

  it('a non-streamed caller that hangs up stops the upstream call and pays for the prompt it received', async () => {
    messagesFake.delayMs = 5000;
    try {
      const account = await seedAccount(t.ctx, 10);
      const before = messagesFake.stopped;
      const controller = new AbortController();
      const { url, headers, body } = call('messages', 'chatgen-4-haiku', false, account.key);
      const answer = request(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify({ ...body, messages: [{ role: 'user', content: 'word '.repeat(6000) }] }), signal: controller.signal });
      const sent = messagesFake.received;
      for (let i = 0; i < 200 && messagesFake.received === sent; i++) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      await expect(answer).rejects.toThrow();
      for (let i = 0; i < 200 && messagesFake.stopped === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(messagesFake.stopped).toBe(before + 1);
      const [row] = await usageRows(account.user.id, 1);
      expect(row).toMatchObject({ status: 'aborted', output_tokens: 0 });
      expect(row!.input_tokens).toBeGreaterThanOrEqual(6000);
      expect(row!.cost).toBeGreaterThan(0);
    } finally {
      messagesFake.delayMs = 0;
    }
  });

  it('a streamed caller that leaves before the first token stops the upstream call and pays for the prompt', async () => {
    messagesFake.delayMs = 5000;
    try {
      const account = await seedAccount(t.ctx, 10);
      const before = messagesFake.stopped;
      const controller = new AbortController();
      const { url, headers, body } = call('chat', 'chatgen-4-haiku', true, account.key);
      const answer = request(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify({ ...body, messages: [{ role: 'user', content: 'word '.repeat(3000) }] }), signal: controller.signal });
      const sent = messagesFake.received;
      for (let i = 0; i < 200 && messagesFake.received === sent; i++) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      await answer.catch(() => undefined);
      for (let i = 0; i < 200 && messagesFake.stopped === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(messagesFake.stopped).toBe(before + 1);
      const [row] = await usageRows(account.user.id, 1);
      expect(row).toMatchObject({ status: 'aborted', output_tokens: 0 });
      expect(row!.input_tokens).toBeGreaterThanOrEqual(3000);
      // Never the whole hold: the 16 output tokens it reserved were not produced.
      expect(row!.cost).toBe(t.ctx.pricing.usageCost('chatgen-4-haiku', { input: row!.input_tokens, cache_read: 0, cache_write: 0, output: 0 }).total);
    } finally {
      messagesFake.delayMs = 0;
    }
  });

  it('a chat stream of tool-call arguments without a usage chunk is billed by counting the arguments', async () => {
    openaiFake.omitUsage = true;
    openaiFake.toolArguments = JSON.stringify({ text: 'alpha beta gamma delta '.repeat(750) });
    try {
      const account = await seedAccount(t.ctx, 10);
      const res = await post('/v1/chat/completions', { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, {
        model: 'chatgen-4-sonnet',
        max_tokens: 16,
        stream: true,
        messages: [{ role: 'user', content: 'write' }],
        tools: [{ type: 'function', function: { name: 'save', parameters: { type: 'object' } } }],
      });
      expect(res.statusCode, res.body).toBe(200);
      await t.ctx.textMoney.flush();
      const [row] = await usageRows(account.user.id, 1);
      // 3,000 words of arguments are well over 2,000 tokens, though the call held for 16.
      expect(row!.output_tokens).toBeGreaterThan(2000);
    } finally {
      openaiFake.omitUsage = false;
      openaiFake.toolArguments = undefined;
    }
  });
});
