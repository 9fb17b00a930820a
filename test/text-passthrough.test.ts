import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Native and messages passthrough, and relay: gateway A's channels point at gateway B (a real port),
// which answers with its simulator.

let a: TestApp;
let b: TestApp;
let aBase: string;
let bKey: string;

async function listen(app: TestApp) {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  b = await createTestApp();
  const bBase = await listen(b);
  bKey = (await seedAccount(b.ctx, 10)).key;
  a = await createTestApp();
  aBase = await listen(a);
  const channels = (await a.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data;
  const simulator = channels.find((c: any) => c.type === 'simulator');
  const moved = ['textgen-2.5-flash', 'chatgen-4-sonnet', 'textgen-2.5-pro'];
  await a.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !moved.includes(m)) } });
  for (const [type, model] of [['native', 'textgen-2.5-flash'], ['messages', 'chatgen-4-sonnet'], ['relay', 'textgen-2.5-pro']]) {
    const res = await a.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: `to-b-${type}`, type, base_url: bBase, secret: bKey, models: [model] } });
    expect(res.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await a.close();
  await b.close();
});

describe(`text passthrough to another gateway [${backendName}]`, () => {
  it('native channel: generateContent and a stream come back from B', async () => {
    const account = await seedAccount(a.ctx, 1);
    const body = { contents: [{ role: 'user', parts: [{ text: 'through A' }] }], generationConfig: { maxOutputTokens: 64 } };
    const res = await a.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:generateContent', headers: account.auth, payload: body });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.candidates[0].content.parts[0].text).toContain('through A');
    const stream = await request(`${aBase}/v1beta/models/textgen-2.5-flash:streamGenerateContent?alt=sse`, { method: 'POST', headers: { ...account.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const chunks = (await stream.body.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toContain('through A');
    expect(chunks.at(-1).usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
    // B billed A's key for the same call.
    const bUsed = (await b.app.inject({ method: 'GET', url: '/v1/user/balance', headers: { authorization: `Bearer ${bKey}` } })).json().used_balance;
    expect(bUsed).toBeGreaterThan(0);
  });

  it('messages channel: the SDK, pointed at A, gets B\'s answer, streamed too', async () => {
    const account = await seedAccount(a.ctx, 1);
    const client = new Anthropic({ apiKey: account.key, baseURL: aBase, maxRetries: 0 });
    const message = await client.messages.create({ model: 'chatgen-4-sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'via messages' }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('via messages') });
    const streamed = await client.messages.stream({ model: 'chatgen-4-sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'streamed via messages' }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('streamed via messages') });
    expect(streamed.usage.output_tokens).toBeGreaterThan(0);
  });

  it('relay channel: text relayed to another gateway', async () => {
    const account = await seedAccount(a.ctx, 1);
    const res = await a.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: { model: 'textgen-2.5-pro', max_tokens: 32, messages: [{ role: 'user', content: 'relayed' }] } });
    expect(res.statusCode).toBe(200);
    expect(res.json().content[0].text).toContain('relayed');
  });
});
