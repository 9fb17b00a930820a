import Anthropic from '@anthropic-ai/sdk';
import { ApiError as GeminiApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Issue 24, must-show 1: the official SDKs from npm call the gateway unchanged (only the base URL
// and the key set): create, stream, count tokens, list models, and their error classes.

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(() => t.close());

const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
const anthropic = (apiKey: string) => new Anthropic({ apiKey, baseURL: base, maxRetries: 0 });
const gemini = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${base}/gemini`, retryOptions: { attempts: 1 } } });
const used = async (auth: Record<string, string>) => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: auth })).json().used_balance as number;

/** Runs `call` and returns what it threw. */
async function thrown(call: () => Promise<unknown>): Promise<any> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** Keys for the four refusals every SDK must surface: a wrong key, no money, a limit of 1 a minute. */
async function refusalKeys() {
  const broke = await seedAccount(t.ctx, 0);
  const limited = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 1 });
  return { broke: broke.key, limited: limited.key };
}

describe(`the OpenAI SDK [${backendName}]`, () => {
  it('chat.completions.create answers in the OpenAI format, billed', async () => {
    const account = await seedAccount(t.ctx, 1);
    const completion = await openai(account.key).chat.completions.create({
      model: 'textgen-2.5-flash',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
      max_completion_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['zzz'],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl/);
    expect(completion.choices[0]!.message.content).toContain('Simulated reply');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(258);
    expect(await used(account.auth)).toBeGreaterThan(0);
  });

  it('max_tokens cuts with finish_reason "length"', async () => {
    const account = await seedAccount(t.ctx, 1);
    const completion = await openai(account.key).chat.completions.create({ model: 'textgen-2.5-flash', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage!.completion_tokens).toBe(3);
  });

  it('a stream of chat.completion.chunk ends with [DONE]; include_usage adds the usage chunk', async () => {
    const account = await seedAccount(t.ctx, 1);
    const stream = await openai(account.key).chat.completions.create({ model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'Stream please' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(text).toContain('Simulated reply');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0);
    // The raw stream's last event is the terminator the SDKs stop at.
    const raw = await request(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'x' }], stream: true }) });
    const body = await raw.body.text();
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(body).not.toContain('"usage"');
  });

  it('models.list() lists what the key may use, with kind, endpoints and price', async () => {
    const account = await seedAccount(t.ctx, 1);
    const models = [];
    for await (const model of openai(account.key).models.list()) models.push(model);
    const flash = models.find((m) => m.id === 'textgen-2.5-flash') as any;
    expect(flash).toMatchObject({ object: 'model', owned_by: expect.any(String), created: expect.any(Number), kind: 'text' });
    expect(flash.endpoints).toContain('/v1/chat/completions');
    expect(flash.pricing.per_token).toBeDefined();
    expect(models.find((m) => m.id === 'imggen-2')).toMatchObject({ kind: 'image', endpoints: ['/v1/images/generations'] });
    expect((await openai(account.key).models.retrieve('chatgen-4-haiku')).id).toBe('chatgen-4-haiku');
  });

  it('error classes: 401 AuthenticationError, 402 APIError, 404 NotFoundError, 429 RateLimitError, a tool without its function 400', async () => {
    const { broke, limited } = await refusalKeys();
    const ask = (key: string, model = 'textgen-2.5-flash', extra = {}) => () => openai(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 5, ...extra });
    const e401 = await thrown(ask('sk-wrong'));
    expect(e401).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e401.error).toMatchObject({ message: 'Invalid API key', type: 'authentication_error' });
    const e402 = await thrown(ask(broke));
    expect(e402).toBeInstanceOf(OpenAI.APIError);
    expect(e402.status).toBe(402);
    expect(e402.type).toBe('payment_required');
    expect(await thrown(ask(broke, 'textgen-9'))).toBeInstanceOf(OpenAI.NotFoundError);
    await awayFromRateWindowEdge();
    await ask(limited)();
    const e429 = await thrown(ask(limited));
    expect(e429).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e429.headers.get('retry-after')).toMatch(/^\d+$/);
    const account = await seedAccount(t.ctx, 1);
    // A tool without its function is the caller's mistake, named; nothing is charged for it.
    const tools = await thrown(ask(account.key, 'textgen-2.5-flash', { tools: [{ type: 'function' }] }));
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tools.message).toContain('tools[0]');
    expect(await used(account.auth)).toBe(0);
  });
});

describe(`the Gemini SDK with baseUrl <gateway>/gemini [${backendName}]`, () => {
  it('generateContent answers unwrapped; generateContentStream; countTokens; models.list', async () => {
    const account = await seedAccount(t.ctx, 1);
    const ai = gemini(account.key);
    const answer = await ai.models.generateContent({ model: 'textgen-2.5-pro', contents: 'Write a haiku', config: { maxOutputTokens: 100, systemInstruction: 'Be brief.' } });
    expect(answer.text).toContain('Simulated reply');
    expect(answer.candidates![0]!.finishReason).toBe('STOP');
    expect(answer.usageMetadata!.totalTokenCount).toBe(answer.usageMetadata!.promptTokenCount! + answer.usageMetadata!.candidatesTokenCount!);
    let streamed = '';
    let last: any;
    for await (const chunk of await ai.models.generateContentStream({ model: 'textgen-2.5-flash', contents: 'Stream a haiku' })) {
      streamed += chunk.text ?? '';
      last = chunk;
    }
    expect(streamed).toContain('Simulated reply');
    expect(last.usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
    const counted = await ai.models.countTokens({ model: 'textgen-2.5-flash', contents: 'one two three' });
    expect(counted.totalTokens).toBeGreaterThan(0);
    const listed = [];
    for await (const model of await ai.models.list()) listed.push(model.name);
    expect(listed).toContain('models/textgen-2.5-pro');
    expect(listed).not.toContain('models/imggen-2');
  });

  it('?key= works on /gemini and on /v1beta (native answers stay wrapped there)', async () => {
    const account = await seedAccount(t.ctx, 1);
    const payload = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
    const bare = await t.app.inject({ method: 'POST', url: `/gemini/v1beta/models/textgen-2.5-flash:generateContent?key=${account.key}`, payload });
    expect(bare.json().candidates[0].content.parts[0].text).toContain('Simulated');
    const wrapped = await t.app.inject({ method: 'POST', url: `/v1beta/models/textgen-2.5-flash:countTokens?key=${account.key}`, payload });
    expect(wrapped.json()).toEqual({ code: 200, data: { totalTokens: expect.any(Number) } });
    const header = await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:countTokens', headers: { 'x-goog-api-key': account.key }, payload });
    expect(header.statusCode).toBe(200);
  });

  it('error classes: ApiError with status 401, 402, 404, 429 in the Gemini envelope', async () => {
    const { broke, limited } = await refusalKeys();
    const ask = (key: string, model = 'textgen-2.5-flash') => () => gemini(key).models.generateContent({ model, contents: 'x', config: { maxOutputTokens: 5 } });
    for (const [call, status] of [[ask('wrong'), 401], [ask(broke), 402], [ask(broke, 'textgen-9'), 404]] as const) {
      const err = await thrown(call);
      expect(err).toBeInstanceOf(GeminiApiError);
      expect(err.status).toBe(status);
    }
    await awayFromRateWindowEdge();
    await ask(limited)();
    const e429 = await thrown(ask(limited));
    expect(e429).toBeInstanceOf(GeminiApiError);
    expect(e429.status).toBe(429);
    expect(e429.message).toContain('RESOURCE_EXHAUSTED');
  });
});

describe(`the messages SDK [${backendName}]`, () => {
  it('countTokens, models.list and requestID', async () => {
    const account = await seedAccount(t.ctx, 1);
    const client = anthropic(account.key);
    const counted = await client.messages.countTokens({ model: 'chatgen-4-haiku', system: 'Be brief.', messages: [{ role: 'user', content: 'one two three' }] });
    expect(counted.input_tokens).toBeGreaterThan(3);
    const message = await client.messages.create({ model: 'chatgen-4-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect((message as any)._request_id).toMatch(/\S/);
    const { response } = await client.messages.create({ model: 'chatgen-4-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain('chatgen-4-haiku');
    expect((await client.models.retrieve('chatgen-4-haiku')).display_name).toBe('chatgen-4-haiku');
    expect(await used(account.auth)).toBeGreaterThan(0);
  });

  it('error classes: 401 AuthenticationError, 402 APIError, 404 NotFoundError, 429 RateLimitError', async () => {
    const { broke, limited } = await refusalKeys();
    const ask = (key: string, model = 'chatgen-4-haiku') => () => anthropic(key).messages.create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(await thrown(ask('wrong'))).toBeInstanceOf(Anthropic.AuthenticationError);
    const e402 = await thrown(ask(broke));
    expect(e402).toBeInstanceOf(Anthropic.APIError);
    expect(e402.status).toBe(402);
    expect(await thrown(ask(broke, 'chatgen-9'))).toBeInstanceOf(Anthropic.NotFoundError);
    expect(await thrown(() => anthropic(broke).messages.countTokens({ model: 'chatgen-9', messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.NotFoundError);
    await awayFromRateWindowEdge();
    await ask(limited)();
    expect(await thrown(ask(limited))).toBeInstanceOf(Anthropic.RateLimitError);
  });
});

describe(`the access log [${backendName}]`, () => {
  it('a key sent as ?key= is not written to the access log', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const own = await createTestApp({}, undefined, { logger });
    try {
      const account = await seedAccount(own.ctx, 1);
      const res = await own.app.inject({ method: 'POST', url: `/gemini/v1beta/models/textgen-2.5-flash:countTokens?alt=json&key=${account.key}`, payload: { contents: [{ parts: [{ text: 'hi' }] }] } });
      expect(res.statusCode).toBe(200);
      const access = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
      expect(access.url).toBe('/gemini/v1beta/models/textgen-2.5-flash:countTokens?alt=json&key=[redacted]');
      expect(lines.join('\n')).not.toContain(account.key);
    } finally {
      await own.close();
    }
  });
});

describe(`key policies on the new surfaces [${backendName}]`, () => {
  it('GET /v1/models lists only the key\'s models; chat completions and the Gemini surface refuse others with 403', async () => {
    const account = await seedAccount(t.ctx, 1);
    const patched = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: { models: ['chatgen-4-haiku', 'imggen-2-ext'] } });
    expect(patched.statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const listed = (await t.app.inject({ method: 'GET', url: '/v1/models', headers: account.auth })).json();
    expect(listed.data.map((m: { id: string }) => m.id)).toEqual(['chatgen-4-haiku', 'imggen-2']);
    expect(listed).toMatchObject({ object: 'list', has_more: false, first_id: 'chatgen-4-haiku', last_id: 'imggen-2' });
    const refused = await thrown(() => openai(account.key).chat.completions.create({ model: 'textgen-2.5-flash', messages: [{ role: 'user', content: 'x' }] }));
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const gem = await thrown(() => gemini(account.key).models.generateContent({ model: 'textgen-2.5-flash', contents: 'x' }));
    expect(gem.status).toBe(403);
    expect((await openai(account.key).chat.completions.create({ model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 })).choices).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: '/v1/models/textgen-2.5-flash', headers: account.auth })).statusCode).toBe(403);
  });

  it('the huge-prompt limits apply to chat completions and the Gemini surface (400 past the window, before any hold)', async () => {
    const account = await seedAccount(t.ctx, 1);
    const huge = 'word '.repeat(250_000);
    const chat = await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: account.auth, payload: { model: 'chatgen-4-haiku', messages: [{ role: 'user', content: huge }] } });
    expect(chat.statusCode).toBe(400);
    expect(chat.json()).toEqual({ error: { code: 400, message: expect.stringContaining('context window'), type: 'invalid_request_error', param: null } });
    const gem = await t.app.inject({ method: 'POST', url: '/gemini/v1beta/models/chatgen-4-haiku:countTokens', headers: { 'x-goog-api-key': account.key }, payload: { contents: [{ parts: [{ text: huge }] }] } });
    expect(gem.json()).toEqual({ error: { code: 400, message: expect.stringContaining('context window'), status: 'INVALID_ARGUMENT' } });
    expect(await used(account.auth)).toBe(0);
  });
});
