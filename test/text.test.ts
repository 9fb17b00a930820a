import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { toBalance } from '../src/lib/money.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(() => t.close());

const native = (model: string, method: string, auth: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'POST', url: `/v1beta/models/${model}:${method}`, headers: auth, payload: payload as object });
const contents = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

describe(`native text endpoint [${backendName}]`, () => {
  it('generateContent answers {code:200, data} with every field of the native answer', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await native('textgen-2.5-pro', 'generateContent', account.auth, {
      ...contents('Write a haiku about gateways'),
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 256, temperature: 0.2 },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    });
    expect(res.statusCode).toBe(200);
    const { code, data } = res.json();
    expect(code).toBe(200);
    const [candidate] = data.candidates;
    expect(candidate.content.role).toBe('model');
    expect(candidate.content.parts[0].text).toEqual(expect.any(String));
    expect(candidate.finishReason).toBe('STOP');
    expect(candidate.index).toBe(0);
    expect(candidate.safetyRatings[0]).toEqual({ category: expect.any(String), probability: expect.any(String) });
    expect(data.promptFeedback.safetyRatings.length).toBeGreaterThan(0);
    const usage = data.usageMetadata;
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.candidatesTokenCount);
    expect(usage.thoughtsTokenCount).toBe(0);
    expect(usage.promptTokensDetails).toEqual([{ modality: 'TEXT', tokenCount: usage.promptTokenCount }]);
  });

  it('an inline image is counted in promptTokensDetails; maxOutputTokens cuts with MAX_TOKENS', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await native('textgen-2.5-flash', 'generateContent', account.auth, {
      contents: [{ role: 'user', parts: [{ text: 'what is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }],
      generationConfig: { maxOutputTokens: 3 },
    });
    const data = res.json().data;
    expect(data.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(data.usageMetadata.candidatesTokenCount).toBe(3);
    expect(data.usageMetadata.promptTokensDetails).toContainEqual({ modality: 'IMAGE', tokenCount: 258 });
  });

  it('countTokens counts without charging', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await native('textgen-2.5-flash', 'countTokens', account.auth, contents('one two three'));
    expect(res.json()).toEqual({ code: 200, data: { totalTokens: expect.any(Number) } });
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0);
  });

  it.each([
    ['an unknown model', 'textgen-9', 'generateContent', contents('x'), 404, 'NOT_FOUND'],
    ['an unknown method', 'textgen-2.5-pro', 'summon', contents('x'), 404, 'NOT_FOUND'],
    ['empty contents', 'textgen-2.5-pro', 'generateContent', { contents: [] }, 400, 'INVALID_ARGUMENT'],
    ['a part with neither text nor image', 'textgen-2.5-pro', 'generateContent', { contents: [{ parts: [{}] }] }, 400, 'INVALID_ARGUMENT'],
    ['an upstream that is down', 'textgen-2.5-pro', 'generateContent', contents('x [sim:fail]'), 503, 'UNAVAILABLE'],
  ])('%s: the matching status in the native envelope', async (_name, model, method, payload, status, name) => {
    const account = await seedAccount(t.ctx, 1);
    const res = await native(model, method, account.auth, payload);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: { code: status, message: expect.any(String), status: name } });
  });

  it('401 UNAUTHENTICATED and 402 PAYMENT_REQUIRED (before any upstream call: no usage row)', async () => {
    const anonymous = await native('textgen-2.5-pro', 'generateContent', {}, contents('x'));
    expect(anonymous.json()).toEqual({ error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' } });
    const broke = await seedAccount(t.ctx, 0);
    const res = await native('textgen-2.5-pro', 'generateContent', broke.auth, contents('x'));
    expect(res.json()).toEqual({ error: { code: 402, message: expect.any(String), status: 'PAYMENT_REQUIRED' } });
    expect(await t.ctx.db.selectFrom('usage').select('id').where('user_id', '=', broke.user.id).execute()).toEqual([]);
  });

  it('streamGenerateContent with alt=sse sends one data: line per chunk over a real port', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1beta/models/textgen-2.5-flash:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { ...account.auth, 'content-type': 'application/json' },
      body: JSON.stringify(contents('stream please')),
    });
    expect(res.headers['content-type']).toContain('text/event-stream');
    const events = (await res.body.text()).split('\n\n').filter(Boolean);
    expect(events.length).toBeGreaterThan(3);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    const chunks = events.map((e) => JSON.parse(e.slice(6)));
    const last = chunks.at(-1);
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined)).toBe(true);
  });
});

describe(`messages endpoint [${backendName}]`, () => {
  it('the vendor SDK completes a call and a streamed call against the gateway', async () => {
    const account = await seedAccount(t.ctx, 1);
    const client = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
    const message = await client.messages.create({ model: 'chatgen-4-sonnet', max_tokens: 128, system: 'Be kind.', messages: [{ role: 'user', content: 'Hello!' }] });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'chatgen-4-sonnet', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Hello!') });
    expect(message.usage.input_tokens).toBeGreaterThan(0);

    const seen: string[] = [];
    const stream = client.messages.stream({ model: 'chatgen-4-haiku', max_tokens: 128, messages: [{ role: 'user', content: [{ type: 'text', text: 'Stream it' }] }] });
    stream.on('streamEvent', (event) => seen.push(event.type));
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Stream it') });
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(seen[0]).toBe('message_start');
    expect(seen).toEqual(expect.arrayContaining(['content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']));
    expect(seen.at(-1)).toBe('message_stop');
  });

  it('the raw stream is the standard event sequence, ping included, one event per delta', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': account.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    const names = (await res.body.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => /^event: (\w+)/.exec(e)?.[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((n) => n === 'content_block_delta').length).toBeGreaterThan(2);
  });

  it('stop_sequences end the reply with stop_reason stop_sequence', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { 'x-api-key': account.key, 'vendor-version': '2025-10-01' },
      payload: { model: 'chatgen-4-haiku', max_tokens: 200, stop_sequences: ['reply'], messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.json()).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'reply', content: [{ type: 'text', text: 'Simulated ' }] });
  });

  it('an unknown vendor-version is a 400; errors carry "type":"error"', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { 'x-api-key': account.key, 'vendor-version': '2020-01-01' },
      payload: { model: 'chatgen-4-haiku', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ type: 'error', error: { code: 400, type: 'invalid_request_error', message: expect.stringContaining('vendor-version') } });
    const down = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: { model: 'chatgen-4-haiku', max_tokens: 10, messages: [{ role: 'user', content: 'x [sim:fail]' }] } });
    expect(down.json()).toMatchObject({ type: 'error', error: { code: 502, type: 'bad_gateway' } });
  });

  it('billing: a caller reads its own charge right after the answer (the settlement is written before the balance is read)', async () => {
    const account = await seedAccount(t.ctx, 1, { quota: 1 });
    const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: { model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'what do I owe?' }] } });
    expect(res.statusCode).toBe(200);
    const key = (await t.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth })).json();
    const user = (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json();
    const [row] = await t.ctx.db.selectFrom('usage').select(['cost', 'status']).where('user_id', '=', account.user.id).execute();
    expect(row).toMatchObject({ status: 'ok' });
    const charged = toBalance(Number(row!.cost), t.ctx.config);
    expect(charged).toBeGreaterThan(0);
    expect(key).toMatchObject({ success: true, used_balance: charged, remain_balance: toBalance(1_000_000 - Number(row!.cost), t.ctx.config) });
    expect(user).toMatchObject({ success: true, used_balance: charged, remain_balance: toBalance(1_000_000 - Number(row!.cost), t.ctx.config) });
  });

  it('billing: the used balance equals the sum of the usage rows; the ledger balances', async () => {
    const account = await seedAccount(t.ctx, 1);
    for (let i = 0; i < 5; i++) {
      await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: { model: 'chatgen-4-sonnet', max_tokens: 64, messages: [{ role: 'user', content: `question ${i}` }] } });
      await native('textgen-2.5-pro', 'generateContent', account.auth, contents(`question ${i}`));
    }
    // Settlements are written just after the answers (text-billing.ts): let the last ones commit.
    await t.ctx.textMoney.flush();
    const rows = await t.ctx.db.selectFrom('usage').select(['cost', 'status']).where('user_id', '=', account.user.id).execute();
    expect(rows).toHaveLength(10);
    const charged = rows.reduce((sum, r) => sum + Number(r.cost), 0);
    // What the caller sees at once (a float this process holds for the key is not shown as used) ...
    const shown = (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json();
    expect(shown).toMatchObject({ success: true, used_balance: toBalance(charged, t.ctx.config) });
    // ... and what the account's column says once the floats gave back what they did not spend.
    await t.ctx.textFloats.closeAll();
    await t.ctx.textMoney.flush();
    const user = await t.ctx.db.selectFrom('users').select('used').where('id', '=', account.user.id).executeTakeFirstOrThrow();
    expect(Number(user.used)).toBe(charged);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});
