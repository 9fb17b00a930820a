import Anthropic from '@anthropic-ai/sdk';
import { ApiError as GeminiApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeGeminiText, type FakeGeminiText } from './support/fake-gemini-text.ts';
import { startFakeMessagesText, type FakeMessagesText } from './support/fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './support/fake-openai-text.ts';

// Issue 24, must-show 2: each outbound text type against a strict local fake of its vendor's API,
// first driven by that vendor's official SDK (the fake takes what real clients send and answers what
// they parse), then by our adapter through the gateway, streaming and not, billed from the fake's counts.

let t: TestApp;
let base: string;
let openaiFake: FakeOpenAIText;
let geminiFake: FakeGeminiText;
let messagesFake: FakeMessagesText;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  [openaiFake, geminiFake, messagesFake] = await Promise.all([startFakeOpenAIText(), startFakeGeminiText(), startFakeMessagesText()]);
  const channels: [string, { url: string; key: string }, string, string][] = [
    ['openai', openaiFake, 'chatgen-4-sonnet', 'gpt-fake-mini'],
    ['gemini', geminiFake, 'textgen-2.5-pro', 'gemini-fake-flash'],
    ['messages', messagesFake, 'chatgen-4-haiku', 'messages-fake-small'],
  ];
  for (const [type, fake, ours, theirs] of channels) {
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: `${type}-text`, type, base_url: fake.url, secret: fake.key, models: [ours], model_mapping: { [ours]: theirs }, priority: 10 } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const taken = new Set(channels.map(([, , ours]) => ours));
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !taken.has(m)) } });
});
afterAll(async () => {
  await Promise.all([openaiFake?.close(), geminiFake?.close(), messagesFake?.close()]);
  await t.close();
});

async function thrown(call: () => Promise<unknown>): Promise<any> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** The account's usage rows once `count` are written (settlements may be batched). */
async function usageRows(userId: string, count: number) {
  const read = () => t.ctx.db.selectFrom('usage').select(['model', 'endpoint', 'input_tokens', 'output_tokens', 'cost', 'status']).where('user_id', '=', userId).orderBy('id').execute();
  let rows = await read();
  for (let i = 0; i < 100 && rows.length < count; i++) {
    await new Promise((r) => setTimeout(r, 30));
    rows = await read();
  }
  return rows.map((r) => ({ ...r, input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens), cost: Number(r.cost) }));
}
const costOf = (model: string, input: number, output: number) => t.ctx.pricing.tokenUnits(model, input, output);

/** Runs `body` with the named channel mapping `ours` to `theirs` (a model the fake then serves), and restores its mapping after. */
async function mappedTo(channelName: string, fake: { models: string[] }, ours: string, theirs: string, body: () => Promise<void>) {
  const channel = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.name === channelName);
  const patch = async (mapping: Record<string, string>) => {
    await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { model_mapping: mapping } });
    t.ctx.channels.invalidate();
  };
  const before = channel.model_mapping as Record<string, string>;
  fake.models.push(theirs);
  await patch({ ...before, [ours]: theirs });
  try {
    await body();
  } finally {
    await patch(before);
  }
}

describe(`openai text [${backendName}]`, () => {
  it('the fake: the openai SDK creates and streams; no key is 401, an unknown field 400, an unknown model 404', async () => {
    const sdk = new OpenAI({ apiKey: openaiFake.key, baseURL: `${openaiFake.url}/v1`, maxRetries: 0 });
    const done = await sdk.chat.completions.create({ model: 'gpt-fake-mini', messages: [{ role: 'user', content: 'hello' }], max_completion_tokens: 20 });
    expect(done.choices[0]!.message.content).toBe('echo: hello');
    let streamed = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of await sdk.chat.completions.create({ model: 'gpt-fake-mini', messages: [{ role: 'user', content: 'a b c' }], stream: true, stream_options: { include_usage: true } })) {
      streamed += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(streamed).toBe('echo: a b c');
    expect(usage!.prompt_tokens).toBe(17);
    expect(await thrown(() => new OpenAI({ apiKey: 'sk-wrong', baseURL: `${openaiFake.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gpt-fake-mini', messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(OpenAI.AuthenticationError);
    const unknown = await thrown(() => sdk.chat.completions.create({ model: 'gpt-fake-mini', messages: [{ role: 'user', content: 'x' }], bogus: 1 } as any));
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect(unknown.message).toContain('Unrecognized request argument supplied: bogus');
    expect(await thrown(() => sdk.chat.completions.create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(OpenAI.NotFoundError);
    const bare = await request(`${openaiFake.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"gpt-fake-mini","messages":[{"role":"user","content":"x"}]}' });
    expect(bare.statusCode).toBe(401);
    expect((await bare.body.json() as any).error.message).toContain("didn't provide an API key");
  });

  it('the adapter: Bearer, /v1/chat/completions, every field; usage billed from the fake; streaming with include_usage', async () => {
    // The fakes report counts of their own, unlike ours (below the call's hold, which caps a charge).
    const account = await seedAccount(t.ctx, 1);
    const client = new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 });
    const done = await client.chat.completions.create({ model: 'chatgen-4-sonnet', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'ping' }], max_tokens: 40, temperature: 0.5, top_p: 0.8, stop: ['END'], seed: 7 });
    expect(done.choices[0]!.message.content).toBe('echo: ping');
    expect(done.usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 5 });
    const sent = openaiFake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${openaiFake.key}`);
    expect(sent.body).toEqual({ model: 'gpt-fake-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'ping' }], max_tokens: 40, temperature: 0.5, top_p: 0.8, stop: ['END'], seed: 7 });

    let streamed = '';
    const named = new Set<string>();
    for await (const chunk of await client.chat.completions.create({ model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'one two' }], stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? '';
      named.add(chunk.model);
    }
    expect(streamed).toBe('echo: one two');
    // The channel maps the model: the answer names it as the caller did, whole and streamed.
    expect(done.model).toBe('chatgen-4-sonnet');
    expect([...named]).toEqual(['chatgen-4-sonnet']);
    expect(openaiFake.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    // The messages endpoint reaches the same upstream through the translation.
    const viaMessages = await new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 }).messages.create({ model: 'chatgen-4-sonnet', max_tokens: 30, messages: [{ role: 'user', content: 'hey' }] });
    expect(viaMessages.content[0]).toMatchObject({ text: 'echo: hey' });
    const rows = await usageRows(account.user.id, 3);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ model: 'chatgen-4-sonnet', input_tokens: 17, output_tokens: 5, cost: costOf('chatgen-4-sonnet', 17, 5), status: 'ok' });
    expect(rows.map((r) => r.endpoint)).toEqual(['chat-completions', 'chat-completions', 'messages']);
  });

  it("a messages caller's thinking: disabled (Claude Code's side calls) reaches a model that takes no reasoning effort as none at all", async () => {
    const account = await seedAccount(t.ctx, 1);
    await mappedTo('openai-text', openaiFake, 'chatgen-4-sonnet', 'gpt-4.1', async () => {
      const sdk = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
      const message = await sdk.messages.create({ model: 'chatgen-4-sonnet', max_tokens: 30, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'classify this' }] });
      expect(message.content[0]).toMatchObject({ text: 'echo: classify this' });
      const sent = openaiFake.requests.at(-1)!.body;
      expect(sent.model).toBe('gpt-4.1');
      expect(sent).not.toHaveProperty('reasoning_effort');
      // An OpenAI caller's own `none` still goes as it was said (the upstream's 400 is its answer to it).
      const client = new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 });
      const refused = await thrown(() => client.chat.completions.create({ model: 'chatgen-4-sonnet', reasoning_effort: 'none', messages: [{ role: 'user', content: 'x' }] }));
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused.message).toContain('reasoning_effort');
    });
  });

  it('tools and response_format pass through, tool calls come back (whole and streamed)', async () => {
    const account = await seedAccount(t.ctx, 1);
    const client = new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const called = await client.chat.completions.create({ model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'weather in Paris?' }], tools, tool_choice: 'auto' });
    expect(called.choices[0]!.finish_reason).toBe('tool_calls');
    expect(called.choices[0]!.message.tool_calls).toEqual([{ id: 'call_fake1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }]);
    expect(openaiFake.requests.at(-1)!.body).toMatchObject({ tools, tool_choice: 'auto' });
    // The tool's answer goes back as the caller wrote it (assistant tool_calls, a tool message).
    const answered = await client.chat.completions.create({
      model: 'chatgen-4-sonnet',
      tools,
      messages: [{ role: 'user', content: 'weather in Paris?' }, { role: 'assistant', content: null, tool_calls: called.choices[0]!.message.tool_calls! }, { role: 'tool', tool_call_id: 'call_fake1', content: 'sunny' }],
    });
    expect(openaiFake.requests.at(-1)!.body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_fake1', content: 'sunny' });
    expect(answered.choices).toHaveLength(1);
    const stream = client.chat.completions.stream({ model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'weather?' }], tools });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls![0]).toMatchObject({ id: 'call_fake1', function: { name: 'weather', arguments: '{"city":"Paris"}' } });
    const json = await client.chat.completions.create({ model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'as json' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ echo: 'as json' });
  });
});

describe(`gemini text [${backendName}]`, () => {
  it('the fake: @google/genai generates, streams and counts; no key is 403, a wrong key 400 API_KEY_INVALID, an unknown field 400', async () => {
    const sdk = new GoogleGenAI({ apiKey: geminiFake.key, httpOptions: { baseUrl: geminiFake.url, retryOptions: { attempts: 1 } } });
    const done = await sdk.models.generateContent({ model: 'gemini-fake-flash', contents: 'hello', config: { maxOutputTokens: 20, temperature: 0.3, systemInstruction: 'Be brief.' } });
    expect(done.text).toBe('echo: hello');
    let streamed = '';
    for await (const chunk of await sdk.models.generateContentStream({ model: 'gemini-fake-flash', contents: 'a b c' })) streamed += chunk.text ?? '';
    expect(streamed).toBe('echo: a b c');
    expect((await sdk.models.countTokens({ model: 'gemini-fake-flash', contents: 'x' })).totalTokens).toBe(77);
    const wrong = await thrown(() => new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: geminiFake.url, retryOptions: { attempts: 1 } } }).models.generateContent({ model: 'gemini-fake-flash', contents: 'x' }));
    expect(wrong).toBeInstanceOf(GeminiApiError);
    expect(wrong.message).toContain('API_KEY_INVALID');
    const body = JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] });
    const none = await request(`${geminiFake.url}/v1beta/models/gemini-fake-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(none.statusCode).toBe(403);
    await none.body.dump();
    const bearer = await request(`${geminiFake.url}/v1beta/models/gemini-fake-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${geminiFake.key}` }, body });
    expect(bearer.statusCode).toBe(403);
    await bearer.body.dump();
    const extra = await request(`${geminiFake.url}/v1beta/models/gemini-fake-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': geminiFake.key }, body: JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }], max_tokens: 3 }) });
    expect(((await extra.body.json()) as any).error.message).toContain('Unknown name "max_tokens"');
  });

  it("a messages caller's thinking: disabled reaches a Gemini Pro model (which always thinks) without a zero budget", async () => {
    const account = await seedAccount(t.ctx, 1);
    await mappedTo('gemini-text', geminiFake, 'textgen-2.5-pro', 'gemini-2.5-pro', async () => {
      const sdk = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
      const message = await sdk.messages.create({ model: 'textgen-2.5-pro', max_tokens: 30, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'summarize' }] });
      expect(message.content.find((b) => b.type === 'text')).toMatchObject({ text: 'echo: summarize' });
      expect(geminiFake.requests.at(-1)!.body.generationConfig ?? {}).not.toHaveProperty('thinkingConfig');
      // The fake refuses a zero budget on a Pro model, as the API does: a Gemini caller's own is its to make.
      const refused = await thrown(() => new GoogleGenAI({ apiKey: geminiFake.key, httpOptions: { baseUrl: geminiFake.url } }).models.generateContent({ model: 'gemini-2.5-pro', contents: 'x', config: { thinkingConfig: { thinkingBudget: 0 } } }));
      expect(refused).toBeInstanceOf(GeminiApiError);
      expect(refused.message).toContain('only works in thinking mode');
    });
  });

  it('the adapter: x-goog-api-key, bare answers, every field; usage billed from the fake (thoughts as output); streams; countTokens is the fake\'s', async () => {
    const account = await seedAccount(t.ctx, 1);
    const ai = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: `${base}/gemini`, retryOptions: { attempts: 1 } } });
    const done = await ai.models.generateContent({ model: 'textgen-2.5-pro', contents: 'ping', config: { maxOutputTokens: 40, temperature: 0.4, topP: 0.9, stopSequences: ['END'], systemInstruction: 'Be brief.' } });
    expect(done.text).toBe('echo: ping');
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-fake-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(geminiFake.key);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'ping' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' },
      generationConfig: { maxOutputTokens: 40, temperature: 0.4, topP: 0.9, stopSequences: ['END'] },
    });
    let streamed = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'textgen-2.5-pro', contents: 'one two' })) streamed += chunk.text ?? '';
    expect(streamed).toBe('echo: one two');
    expect(geminiFake.requests.at(-1)!.path).toBe('/v1beta/models/gemini-fake-flash:streamGenerateContent?alt=sse');
    // Chat completions reach the same upstream through the translation, streamed.
    const client = new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 });
    let viaChat = '';
    for await (const chunk of await client.chat.completions.create({ model: 'textgen-2.5-pro', messages: [{ role: 'user', content: 'héllo wörld' }], top_p: 0.5, stream: true })) viaChat += chunk.choices[0]?.delta.content ?? '';
    expect(viaChat).toBe('echo: héllo wörld');
    // No ceiling asked, none sent: the upstream's default applies (the hold assumed 8192; the settlement is what it reports).
    expect(geminiFake.requests.at(-1)!.body.generationConfig).toEqual({ topP: 0.5 });
    const rows = await usageRows(account.user.id, 3);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ model: 'textgen-2.5-pro', input_tokens: 13, output_tokens: 6, cost: costOf('textgen-2.5-pro', 13, 6), status: 'ok' });
    const before = geminiFake.requests.length;
    expect((await ai.models.countTokens({ model: 'textgen-2.5-pro', contents: 'count me' })).totalTokens).toBe(77);
    expect(geminiFake.requests.at(-1)!.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'count me' }] }] });
    const counted = await new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 }).messages.countTokens({ model: 'textgen-2.5-pro', system: 'Be brief.', messages: [{ role: 'user', content: 'count me' }] });
    expect(counted.input_tokens).toBe(77);
    expect(geminiFake.requests.at(-1)!.body.generateContentRequest).toMatchObject({ model: 'models/gemini-fake-flash', systemInstruction: { parts: [{ text: 'Be brief.' }] } });
    expect(geminiFake.requests.length).toBe(before + 2);
    expect(await usageRows(account.user.id, 3)).toHaveLength(3);
  });

  it('a channel whose key the upstream refuses is a 502 naming no key; the caller is refunded', async () => {
    const account = await seedAccount(t.ctx, 1);
    const key = geminiFake.key;
    geminiFake.key = 'rotated';
    try {
      const res = await t.app.inject({ method: 'POST', url: '/gemini/v1beta/models/textgen-2.5-pro:generateContent', headers: { 'x-goog-api-key': account.key }, payload: { contents: [{ parts: [{ text: 'x' }] }] } });
      expect(res.statusCode).toBe(502);
      expect(res.body).not.toContain(key);
      expect(res.json().error.status).toBe('BAD_GATEWAY');
    } finally {
      geminiFake.key = key;
    }
    const [row] = await usageRows(account.user.id, 1);
    expect(row).toMatchObject({ status: 'failed', cost: 0 });
  });
});

describe(`messages text [${backendName}]`, () => {
  it('the fake: the messages SDK creates and streams; no key is 401, no anthropic-version 400, an unknown field 400', async () => {
    const sdk = new Anthropic({ apiKey: messagesFake.key, baseURL: messagesFake.url, maxRetries: 0 });
    const done = await sdk.messages.create({ model: 'messages-fake-small', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] });
    expect(done.content[0]).toMatchObject({ type: 'text', text: 'echo: hello' });
    expect(done.usage.input_tokens).toBe(11);
    const streamed = await sdk.messages.stream({ model: 'messages-fake-small', max_tokens: 20, messages: [{ role: 'user', content: 'a b c' }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ text: 'echo: a b c' });
    expect(streamed.usage.output_tokens).toBe(3);
    expect(await thrown(() => new Anthropic({ apiKey: 'nope', baseURL: messagesFake.url, maxRetries: 0 }).messages.create({ model: 'messages-fake-small', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(await thrown(() => sdk.messages.create({ model: 'messages-fake-small', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], bogus: 1 } as any))).toBeInstanceOf(Anthropic.BadRequestError);
    const body = JSON.stringify({ model: 'messages-fake-small', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    const noKey = await request(`${messagesFake.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body });
    expect(noKey.statusCode).toBe(401);
    expect(await noKey.body.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
    const noVersion = await request(`${messagesFake.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': messagesFake.key }, body });
    expect(noVersion.statusCode).toBe(400);
    expect(((await noVersion.body.json()) as any).error.message).toBe('anthropic-version: header is required');
  });

  it('the adapter: x-api-key and the caller\'s anthropic-version, every field; usage billed from the fake, streaming and not', async () => {
    const account = await seedAccount(t.ctx, 1);
    const client = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
    // Sampling fields the SDK's types no longer list still reach the wire as given.
    const params = { model: 'chatgen-4-haiku', max_tokens: 40, system: 'Be brief.', temperature: 0.2, top_p: 0.7, stop_sequences: ['END'], messages: [{ role: 'user' as const, content: 'ping' }] };
    const done = await client.messages.create(params);
    expect(done.content[0]).toMatchObject({ text: 'echo: ping' });
    expect(done.usage).toMatchObject({ input_tokens: 11, output_tokens: 3 });
    const sent = messagesFake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(messagesFake.key);
    // Same format: the version the caller's SDK sent goes with its body (it changes the meaning).
    expect(sent.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['vendor-version']).toBeUndefined();
    // The caller's body as it came, but the model.
    expect(sent.body).toEqual({ ...params, model: 'messages-fake-small' });
    const streamed = await client.messages.stream({ model: 'chatgen-4-haiku', max_tokens: 40, messages: [{ role: 'user', content: 'one two' }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ text: 'echo: one two' });
    expect(messagesFake.requests.at(-1)!.body.stream).toBe(true);
    let viaChat = '';
    for await (const chunk of await new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'hi' }], stream: true })) viaChat += chunk.choices[0]?.delta.content ?? '';
    expect(viaChat).toBe('echo: hi');
    const rows = await usageRows(account.user.id, 3);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ model: 'chatgen-4-haiku', input_tokens: 11, output_tokens: 3, cost: costOf('chatgen-4-haiku', 11, 3), status: 'ok' });
    const tools = await thrown(() => new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }));
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tools.message).toContain('response_format');
  });

  it("a Codex or Gemini caller's thinking reaches each Claude model in the shape it takes (a budget before 4.6, adaptive from 4.7)", async () => {
    // The fake refuses what each real model refuses; the messages SDK shows it.
    messagesFake.models.push('claude-sonnet-4-5-20250929', 'claude-opus-4-7');
    const vendor = new Anthropic({ apiKey: messagesFake.key, baseURL: messagesFake.url, maxRetries: 0 });
    const old = await thrown(() => vendor.messages.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 20, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'x' }] } as any));
    expect(old).toBeInstanceOf(Anthropic.BadRequestError);
    const budget = await thrown(() => vendor.messages.create({ model: 'claude-opus-4-7', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'x' }] }));
    expect(budget.error.error.message).toContain('"thinking.type.enabled" is not supported for this model');
    const account = await seedAccount(t.ctx, 1);
    const codex = new OpenAI({ apiKey: account.key, baseURL: `${base}/v1`, maxRetries: 0 });
    await mappedTo('messages-text', messagesFake, 'chatgen-4-haiku', 'claude-sonnet-4-5-20250929', async () => {
      const answer = await codex.responses.create({ model: 'chatgen-4-haiku', input: 'plan it', reasoning: { effort: 'high' }, max_output_tokens: 1000 });
      expect(answer.output_text).toBe('echo: plan it');
      expect(messagesFake.requests.at(-1)!.body).toMatchObject({ model: 'claude-sonnet-4-5-20250929', thinking: { type: 'enabled', budget_tokens: 24576 }, max_tokens: 25576 });
      expect(messagesFake.requests.at(-1)!.body).not.toHaveProperty('output_config');
    });
    await mappedTo('messages-text', messagesFake, 'chatgen-4-haiku', 'claude-opus-4-7', async () => {
      const gemini = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: `${base}/gemini` } });
      const answer = await gemini.models.generateContent({ model: 'chatgen-4-haiku', contents: 'plan it', config: { maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 8000 } } });
      expect(answer.text).toBe('echo: plan it');
      expect(messagesFake.requests.at(-1)!.body).toMatchObject({ model: 'claude-opus-4-7', thinking: { type: 'adaptive' }, output_config: { effort: 'medium' }, max_tokens: 1000 });
    });
  });
});
