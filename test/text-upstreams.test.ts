import Anthropic from '@anthropic-ai/sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeChatUpstream, type FakeChatUpstream } from './support/fake-chat-upstream.ts';

// Text through real upstream protocols: local HTTP servers speaking chat-completions, with failover.

const SECRET = 'sk-upstream-secret-123';
let t: TestApp;
let base: string;
let first: FakeChatUpstream;
let second: FakeChatUpstream;
// What an operator would read in the logs (access lines included).
const logLines: { level: number; msg: string; reqId?: string }[] = [];
const errorLines = () => logLines.filter((line) => line.level >= 50);

beforeAll(async () => {
  t = await createTestApp({}, undefined, { logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) }) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  first = await startFakeChatUpstream(SECRET, 'down');
  second = await startFakeChatUpstream(SECRET, 'ok');
  // The simulator also serves the model; these channels outrank it.
  for (const [name, upstream, priority] of [['first', first, 20], ['second', second, 10]] as const) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/channels',
      headers: adminHeaders,
      payload: { name, type: 'chat-completions', base_url: upstream.url, secret: SECRET, models: ['chatgen-4-haiku'], model_mapping: { 'chatgen-4-haiku': 'upstream-small' }, priority },
    });
    expect(res.statusCode).toBe(201);
  }
  // Only the two upstreams serve the model: take it off the simulator channel.
  const channels = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data;
  const simulator = channels.find((c: any) => c.type === 'simulator');
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => m !== 'chatgen-4-haiku') } });
});
afterAll(async () => {
  await first.close();
  await second.close();
  await t.close();
});

/** A non-streamed "hi" to the messages endpoint with the given key. */
const sayHi = (key: string) =>
  t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': key }, payload: { model: 'chatgen-4-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] } });
const usedBalance = async (auth: Record<string, string>) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: auth })).json().used_balance;

describe(`chat-completions upstreams [${backendName}]`, () => {
  it('the messages SDK works through the chat-completions translation (non-streaming and streaming)', async () => {
    const account = await seedAccount(t.ctx, 1);
    const client = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
    const message = await client.messages.create({ model: 'chatgen-4-haiku', max_tokens: 50, system: 'be short', messages: [{ role: 'user', content: 'ping' }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: ping' });
    expect(message.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const sent = second.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'upstream-small', max_completion_tokens: 50, messages: [{ role: 'system', content: 'be short' }, { role: 'user', content: 'ping' }] });
    expect(sent.headers.authorization).toBe(`Bearer ${SECRET}`);

    const streamed = await client.messages.stream({ model: 'chatgen-4-haiku', max_tokens: 50, messages: [{ role: 'user', content: 'stream this' }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'text', text: 'echo: stream this' });
    expect(streamed.usage.output_tokens).toBe(7);
  });

  it('failover: a first channel answering 503 and a second answering 200 gives the caller a 200', async () => {
    const account = await seedAccount(t.ctx, 1);
    const before = first.requests.length;
    const res = await sayHi(account.key);
    expect(res.statusCode).toBe(200);
    expect(first.requests.length).toBe(before + 1);
    expect(res.body).not.toContain(SECRET);
  });

  it('both down: 502 bad_gateway on messages, nothing charged', async () => {
    second.mode = 'down';
    try {
      const account = await seedAccount(t.ctx, 1);
      const res = await sayHi(account.key);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ type: 'error', error: { code: 502, type: 'bad_gateway' } });
      expect(await usedBalance(account.auth)).toBe(0);
    } finally {
      second.mode = 'ok';
    }
  });

  it('failover: a first channel whose answer is cut off midway is failed over from; the caller gets the second\'s 200', async () => {
    first.mode = 'cut';
    try {
      const account = await seedAccount(t.ctx, 1);
      const before = first.requests.length;
      const res = await sayHi(account.key);
      expect(res.statusCode).toBe(200);
      expect(res.json().content[0].text).toBe('echo: hi');
      expect(first.requests.length).toBe(before + 1);
    } finally {
      first.mode = 'down';
    }
  });

  it('a 200 whose body is not JSON is a 502 bad_gateway, not a 500, and nothing is charged', async () => {
    second.mode = 'garbled';
    try {
      const account = await seedAccount(t.ctx, 1);
      const res = await sayHi(account.key);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ type: 'error', error: { code: 502, type: 'bad_gateway', message: expect.stringContaining('not JSON') } });
      expect(errorLines()).toEqual([]);
      expect(await usedBalance(account.auth)).toBe(0);
    } finally {
      second.mode = 'ok';
    }
  });

  it('an upstream that refuses our credential is a 502 that never shows the secret', async () => {
    first.mode = 'unauthorized';
    second.mode = 'unauthorized';
    try {
      const account = await seedAccount(t.ctx, 1);
      const res = await sayHi(account.key);
      expect(res.statusCode).toBe(502);
      expect(res.body).not.toContain(SECRET);
    } finally {
      first.mode = 'down';
      second.mode = 'ok';
    }
  });

  it('a zero-balance account gets 402 before any upstream request is made', async () => {
    const account = await seedAccount(t.ctx, 0);
    const before = first.requests.length + second.requests.length;
    const res = await sayHi(account.key);
    expect(res.statusCode).toBe(402);
    expect(first.requests.length + second.requests.length).toBe(before);
  });
});

describe(`the native envelope for 403, 429 and 502 [${backendName}]`, () => {
  it('403 PERMISSION_DENIED for a served model with no price; 429 RESOURCE_EXHAUSTED; 502 BAD_GATEWAY when the upstream refuses us', async () => {
    await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'unpriced', type: 'chat-completions', base_url: second.url, secret: SECRET, models: ['mystery-model', 'textgen-2.5-flash'], priority: 50 } });
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 3 });
    const payload = { contents: [{ parts: [{ text: 'hi' }] }] };
    const unpriced = await t.app.inject({ method: 'POST', url: '/v1beta/models/mystery-model:generateContent', headers: account.auth, payload });
    expect(unpriced.json()).toEqual({ error: { code: 403, message: expect.any(String), status: 'PERMISSION_DENIED' } });
    second.mode = 'unauthorized';
    try {
      const refused = await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:generateContent', headers: account.auth, payload });
      expect(refused.json()).toEqual({ error: { code: 502, message: expect.any(String), status: 'BAD_GATEWAY' } });
      expect(refused.body).not.toContain(SECRET);
    } finally {
      second.mode = 'ok';
    }
    await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:generateContent', headers: account.auth, payload });
    const limited = await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:generateContent', headers: account.auth, payload });
    expect(limited.json()).toEqual({ error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' } });
  });
});

describe(`an abandoned stream [${backendName}]`, () => {
  it('is charged for what was produced, and the upstream call is cancelled', async () => {
    second.mode = 'slow';
    try {
      const account = await seedAccount(t.ctx, 1);
      const { request } = await import('undici');
      const controller = new AbortController();
      const res = await request(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': account.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 4000, stream: true, messages: [{ role: 'user', content: 'talk' }] }),
        signal: controller.signal,
      });
      let seen = '';
      try {
        for await (const chunk of res.body) {
          seen += chunk.toString();
          if ((seen.match(/content_block_delta/g) ?? []).length >= 3) controller.abort();
        }
      } catch {
        // aborted by us
      }
      const usage = async () => t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', account.user.id).execute();
      for (let i = 0; i < 100 && (await usage()).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const [row] = await usage();
      expect(row).toMatchObject({ status: 'aborted' });
      expect(row!.output_tokens).toBeGreaterThan(0);
      expect(row!.output_tokens).toBeLessThan(200);
      expect(Number(row!.cost)).toBeGreaterThan(0);
      for (let i = 0; i < 40 && second.cancelled === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(second.cancelled).toBe(1);
      expect(logLines.find((line) => line.msg === 'client left during the stream')).toMatchObject({ level: 30 });
      expect(errorLines()).toEqual([]);
      expect(await usedBalance(account.auth)).toBeCloseTo(Number(row!.cost) / 1e6);
    } finally {
      second.mode = 'ok';
    }
  });
});

describe(`an abandoned call [${backendName}]`, () => {
  it('a client that leaves before the answer cancels the upstream call, and pays for the prompt the upstream received (our count)', async () => {
    second.mode = 'slow';
    try {
      const account = await seedAccount(t.ctx, 1);
      const before = second.cancelled;
      const { request } = await import('undici');
      const controller = new AbortController();
      const answer = request(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': account.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 100, messages: [{ role: 'user', content: 'wait' }] }),
        signal: controller.signal,
      });
      const sent = second.requests.length;
      for (let i = 0; i < 100 && second.requests.length === sent; i++) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      await expect(answer).rejects.toThrow();
      for (let i = 0; i < 100 && second.cancelled === before; i++) await new Promise((r) => setTimeout(r, 20));
      expect(second.cancelled).toBe(before + 1);
      const usage = async () => t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', account.user.id).execute();
      for (let i = 0; i < 100 && (await usage()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      const [row] = await usage();
      expect(row).toMatchObject({ status: 'aborted', output_tokens: 0 });
      expect(row!.input_tokens).toBeGreaterThan(0);
      expect(Number(row!.cost)).toBeGreaterThan(0);
      // A client hanging up is not a failure of ours: an information line, no error with a stack.
      for (let i = 0; i < 100 && !logLines.some((line) => line.msg === 'client left before the answer'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(logLines.find((line) => line.msg === 'client left before the answer')).toMatchObject({ level: 30 });
      expect(errorLines()).toEqual([]);
      expect(await usedBalance(account.auth)).toBe(Number(row!.cost) / 1e6);
    } finally {
      second.mode = 'ok';
    }
  });
});
