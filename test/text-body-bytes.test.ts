import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeGeminiText, type FakeGeminiText } from './support/fake-gemini-text.ts';
import { startFakeMessagesText, type FakeMessagesText } from './support/fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './support/fake-openai-text.ts';

// A same-format call sends the caller's body upstream as the bytes it came in (key order, spacing,
// escapes and number spelling kept) when nothing in it changes; when the channel maps the model,
// or a chat stream must ask for its usage, the body is written again with only that changed.

let t: TestApp;
let messages: FakeMessagesText;
let openai: FakeOpenAIText;
let gemini: FakeGeminiText;
let headers: Record<string, string>;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  messages = await startFakeMessagesText('sk-bytes-messages', ['chatgen-4-haiku', 'claude-mapped']);
  openai = await startFakeOpenAIText('sk-bytes-openai', ['textgen-2.5-pro']);
  gemini = await startFakeGeminiText('bytes-gemini-key', ['gemini-mapped']);
  const channels = [
    { name: 'messages', type: 'messages', base_url: messages.url, secret: messages.key, models: ['chatgen-4-haiku', 'chatgen-4-sonnet'], model_mapping: { 'chatgen-4-sonnet': 'claude-mapped' } },
    { name: 'openai', type: 'openai', base_url: openai.url, secret: openai.key, models: ['textgen-2.5-pro'] },
    { name: 'gemini', type: 'gemini', base_url: gemini.url, secret: gemini.key, models: ['textgen-2.5-flash'], model_mapping: { 'textgen-2.5-flash': 'gemini-mapped' } },
  ];
  for (const payload of channels) {
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { ...payload, priority: 10 } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const taken = new Set(channels.flatMap((c) => c.models));
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !taken.has(m)) } });
  const account = await seedAccount(t.ctx, 10);
  headers = { 'x-api-key': account.key, authorization: `Bearer ${account.key}`, 'content-type': 'application/json' };
});
afterAll(async () => {
  await Promise.all([messages.close(), openai.close(), gemini.close()]);
  await t.close();
});

/** Through a real port: the bytes on the wire are the point (and streams are read as a client reads them). */
async function post(path: string, body: string) {
  const res = await request(`${base}${path}`, { method: 'POST', headers, body });
  const text = await res.body.text();
  return { statusCode: res.statusCode, body: text, json: () => JSON.parse(text) };
}

describe(`the caller's body bytes go upstream [${backendName}]`, () => {
  it('messages: as they came, whole and streamed; with a mapped model, written again naming it', async () => {
    const sent = '{ "max_tokens":64,\n  "model": "chatgen-4-haiku", "messages":[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}], "temperature": 0.50 }';
    const whole = await post('/v1/messages', sent);
    expect(whole.statusCode, whole.body).toBe(200);
    expect(messages.requests.at(-1)!.raw).toBe(sent);
    const streamed = sent.replace('"temperature"', '"stream": true, "temperature"');
    const stream = await post('/v1/messages', streamed);
    expect(stream.statusCode, stream.body).toBe(200);
    expect(stream.body).toContain('event: message_stop');
    expect(messages.requests.at(-1)!.raw).toBe(streamed);

    const mapped = sent.replace('chatgen-4-haiku', 'chatgen-4-sonnet');
    const res = await post('/v1/messages', mapped);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().model).toBe('chatgen-4-sonnet');
    const got = messages.requests.at(-1)!;
    expect(got.raw).not.toBe(mapped);
    expect(got.body).toEqual({ ...JSON.parse(mapped), model: 'claude-mapped' });
  });

  it('chat: as they came, unless a stream must ask for its usage', async () => {
    const sent = '{"messages":[{"role":"user","content":"caf\\u00e9"}],   "model":"textgen-2.5-pro","max_completion_tokens":16}';
    expect((await post('/v1/chat/completions', sent)).statusCode).toBe(200);
    expect(openai.requests.at(-1)!.raw).toBe(sent);

    const asked = sent.replace(/}$/, ', "stream": true, "stream_options": {"include_usage": true}}');
    const streamed = await post('/v1/chat/completions', asked);
    expect(streamed.statusCode, streamed.body).toBe(200);
    expect(openai.requests.at(-1)!.raw).toBe(asked);

    const unasked = asked.replace(', "stream_options": {"include_usage": true}', '');
    const res = await post('/v1/chat/completions', unasked);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('"usage":{');
    const got = openai.requests.at(-1)!;
    expect(got.body).toEqual({ ...JSON.parse(unasked), stream_options: { include_usage: true } });
  });

  it('Gemini: as they came, the mapped model in the path', async () => {
    const sent = '{"contents":[{"role":"user","parts":[{"text":"caf\\u00e9"}]}],  "generationConfig":{"maxOutputTokens":16}}';
    const res = await post('/gemini/v1beta/models/textgen-2.5-flash:generateContent', sent);
    expect(res.statusCode, res.body).toBe(200);
    const got = gemini.requests.at(-1)!;
    expect(got.path).toContain('/models/gemini-mapped:generateContent');
    expect(got.raw).toBe(sent);
  });
});
