import Anthropic from '@anthropic-ai/sdk';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { splitBytes, sseEvent, startFakeSseScript, type FakeSseScript } from './support/fake-sse-script.ts';

// A streamed /v1/messages call to a `messages` channel (the same format on both sides): the
// upstream's events reach the caller as they came, with only message_start's id and model
// rewritten, and the call is billed from the upstream's message_start / message_delta. The other
// stream endings (an error event, an upstream cut off mid-event, a caller that leaves) behave as
// on every other stream. A chat-completions upstream's stream is decoded across reads too.

let t: TestApp;
let base: string;
let upstream: FakeSseScript;
const logLines: { level: number; msg: string }[] = [];

beforeAll(async () => {
  t = await createTestApp({}, undefined, { logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) }) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  upstream = await startFakeSseScript();
  const channels = [
    { name: 'same-format', type: 'messages', base_url: upstream.url, secret: 'sk-up', models: ['chatgen-4-haiku'], model_mapping: { 'chatgen-4-haiku': 'upstream-haiku' } },
    { name: 'chat', type: 'chat-completions', base_url: upstream.url, secret: 'sk-up', models: ['chatgen-4-sonnet'] },
  ];
  for (const payload of channels) expect((await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload })).statusCode).toBe(201);
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const models = simulator.models.filter((m: string) => m !== 'chatgen-4-haiku' && m !== 'chatgen-4-sonnet');
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models } });
});
afterAll(async () => {
  await upstream.close();
  await t.close();
});

const start = sseEvent('message_start', {
  type: 'message_start',
  message: { id: 'msg_upstream_1', type: 'message', role: 'assistant', content: [], model: 'upstream-haiku', stop_reason: null, stop_sequence: null, usage: { input_tokens: 21, cache_read_input_tokens: 0, output_tokens: 1 } },
});
const blockStart = sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const delta = (text: string) => sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
const tail =
  sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }) +
  sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }) +
  sseEvent('message_stop', { type: 'message_stop' });

const streamBody = (model: string) => JSON.stringify({ model, max_tokens: 400, stream: true, messages: [{ role: 'user', content: 'talk' }] });

async function usageRow(userId: string) {
  const read = () => t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', userId).execute();
  for (let i = 0; i < 100 && (await read()).length === 0; i++) await new Promise((r) => setTimeout(r, 30));
  const rows = await read();
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** The account's one call log row (modules/calls/), once written. */
async function callRow(userId: string) {
  const read = async () => (await t.app.inject({ method: 'GET', url: `/admin/calls?user_id=${userId}`, headers: adminHeaders })).json().data as any[];
  for (let i = 0; i < 100 && (await read()).length === 0; i++) await new Promise((r) => setTimeout(r, 30));
  const rows = await read();
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** The data of each event of an SSE text, with its name. */
const eventsOf = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => ({ name: /^event: (.*)$/m.exec(e)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) }));

describe(`a messages stream from a messages upstream [${backendName}]`, () => {
  it("forwards the upstream's events byte for byte (split reads, split characters), renaming only message_start; billed from its counts", async () => {
    // A ping with a field of its own and a citation-less delta with an extra key: re-encoded events would lose them.
    const ping = 'event: ping\ndata: {"type": "ping", "seq": 1}\n\n';
    const script = start + blockStart + ping + delta('héllo ') + delta('wörld 🙂 ') + delta('done') + tail;
    const emoji = Buffer.from(script).indexOf(Buffer.from('🙂'));
    const middleOfDelta = Buffer.from(script).indexOf(Buffer.from('done'));
    upstream.script = { pieces: splitBytes(script, [emoji + 2, middleOfDelta]), end: 'whole' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku') });
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    const [first, ...rest] = text.split(/(?<=\n\n)/);
    expect(rest.join('')).toBe(script.slice(start.length));
    const started = eventsOf(first!)[0]!;
    expect(started.name).toBe('message_start');
    expect(started.data.message).toMatchObject({ model: 'chatgen-4-haiku', usage: { input_tokens: 21, output_tokens: 1 } });
    expect(started.data.message.id).toMatch(/^msg_/);
    expect(started.data.message.id).not.toBe('msg_upstream_1');
    expect(upstream.requests.at(-1)!.body).toMatchObject({ model: 'upstream-haiku', stream: true });
    expect(await usageRow(account.user.id)).toMatchObject({ model: 'chatgen-4-haiku', input_tokens: 21, output_tokens: 9, cost: t.ctx.pricing.tokenUnits('chatgen-4-haiku', 21, 9), status: 'ok' });
    // The messages SDK reads it as it reads the vendor's own stream.
    const sdk = new Anthropic({ apiKey: account.key, baseURL: base, maxRetries: 0 });
    const message = await sdk.messages.stream({ model: 'chatgen-4-haiku', max_tokens: 400, messages: [{ role: 'user', content: 'talk' }] }).finalMessage();
    expect(message).toMatchObject({ model: 'chatgen-4-haiku', content: [{ type: 'text', text: 'héllo wörld 🙂 done' }], stop_reason: 'end_turn', usage: { input_tokens: 21, output_tokens: 9 } });
  });

  it("an upstream error event ends the stream with the gateway's error event (the upstream's message not shown); charged for what was produced", async () => {
    const failure = sseEvent('error', { type: 'error', error: { type: 'overloaded_error', message: 'upstream internals: shard 7 overloaded' } });
    upstream.script = { pieces: [start + blockStart + delta('one two three '), delta('four ') + failure], end: 'whole' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku') });
    const text = await res.body.text();
    expect(text).not.toContain('shard 7');
    const events = eventsOf(text);
    expect(events.filter((e) => e.name === 'content_block_delta').map((e) => e.data.delta.text)).toEqual(['one two three ', 'four ']);
    expect(events.at(-1)).toEqual({ name: 'error', data: { type: 'error', error: { type: 'bad_gateway', message: 'The stream was interrupted' } } });
    // As on every stream an upstream breaks after message_start: the prompt it reported is charged, and the text sent.
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ status: 'aborted', input_tokens: 21 });
    expect(row.output_tokens).toBeGreaterThan(0);
  });

  it('an upstream that closes cleanly before its stop reason ends with the error event, as a cut one does', async () => {
    upstream.script = { pieces: [start + blockStart + delta('one two '), delta('three ')], end: 'whole' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku') });
    const events = eventsOf(await res.body.text());
    expect(events.filter((e) => e.name === 'content_block_delta').map((e) => e.data.delta.text)).toEqual(['one two ', 'three ']);
    expect(events.at(-1)).toEqual({ name: 'error', data: { type: 'error', error: { type: 'bad_gateway', message: 'The stream was interrupted' } } });
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ status: 'aborted', input_tokens: 21 });
    expect((await callRow(account.user.id)).status).toBe('failed');
  });

  it('an upstream cut off mid-event: the caller gets whole events only, then the error event; charged for what was produced', async () => {
    const half = delta('never finished').slice(0, 40);
    upstream.script = { pieces: [start + blockStart + delta('one two '), delta('three ') + half], end: 'cut' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku') });
    const text = await res.body.text();
    expect(text).not.toContain('never');
    const events = eventsOf(text);
    expect(events.filter((e) => e.name === 'content_block_delta').map((e) => e.data.delta.text)).toEqual(['one two ', 'three ']);
    expect(events.at(-1)!.name).toBe('error');
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ status: 'aborted', input_tokens: 21 });
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeLessThan(10);
    // Charged as cut, logged as the upstream's failure (the caller did not leave).
    const call = await callRow(account.user.id);
    expect(call).toMatchObject({ status: 'failed', http_status: 200, usage: { input: 21, output: row.output_tokens } });
    expect(call.first_token_ms).toBeTypeOf('number');
  });

  it('a cut stream of tool-call arguments and thinking is charged for them, not only for its text', async () => {
    const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const thinking = sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }) +
      sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: words } }) +
      sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 });
    const tool = sseEvent('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'note', input: {} } }) +
      sseEvent('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ text: words }) } });
    upstream.script = { pieces: [start + thinking, tool], end: 'cut' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku') });
    await res.body.text();
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ status: 'aborted', input_tokens: 21 });
    // 300 words twice over: each word is a token or more in our count.
    expect(Number(row.output_tokens)).toBeGreaterThan(600);
  });

  it('a caller that leaves stops the upstream call and is charged for what was produced', async () => {
    upstream.script = { pieces: [start + blockStart], end: 'hold', repeat: delta('more words ') };
    const cancelled = upstream.cancelled;
    const account = await seedAccount(t.ctx, 1);
    const controller = new AbortController();
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-haiku'), signal: controller.signal });
    let seen = '';
    try {
      for await (const chunk of res.body) {
        seen += chunk.toString();
        if ((seen.match(/content_block_delta/g) ?? []).length >= 6) controller.abort();
      }
    } catch {
      // aborted by us
    }
    // As on every stream a caller leaves: the prompt (our count) and the text sent.
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ status: 'aborted' });
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeLessThan(400);
    expect(Number(row.cost)).toBeGreaterThan(0);
    for (let i = 0; i < 100 && upstream.cancelled === cancelled; i++) await new Promise((r) => setTimeout(r, 20));
    expect(upstream.cancelled).toBe(cancelled + 1);
    expect(logLines.find((line) => line.msg === 'client left during the stream')).toMatchObject({ level: 30 });
  });
});

describe(`a chat-completions upstream's stream [${backendName}]`, () => {
  it('a character split across two reads arrives whole', async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const script = chunk('naïve ') + chunk('日本語 ') + `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 4 } })}\n\n` + 'data: [DONE]\n\n';
    const at = (s: string) => Buffer.from(script).indexOf(Buffer.from(s));
    upstream.script = { pieces: splitBytes(script, [at('ï') + 1, at('本') + 2]), end: 'whole' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-sonnet') });
    const texts = eventsOf(await res.body.text())
      .filter((e) => e.name === 'content_block_delta')
      .map((e) => e.data.delta.text);
    expect(texts.join('')).toBe('naïve 日本語 ');
    expect(await usageRow(account.user.id)).toMatchObject({ input_tokens: 5, output_tokens: 4, status: 'ok' });
  });

  it('a chat upstream that closes cleanly before its finish ends with the error event, forwarded or translated', async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c3', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    for (const [url, headers, last] of [
      ['/v1/chat/completions', (key: string) => ({ authorization: `Bearer ${key}` }), (text: string) => text.trim().split('\n\n').at(-1)!],
      ['/v1/messages', (key: string) => ({ 'x-api-key': key }), (text: string) => eventsOf(text).at(-1)!.name!],
    ] as const) {
      upstream.script = { pieces: [chunk('one two '), chunk('three ')], end: 'whole' };
      const account = await seedAccount(t.ctx, 1);
      const res = await request(`${base}${url}`, { method: 'POST', headers: { ...headers(account.key), 'content-type': 'application/json' }, body: streamBody('chatgen-4-sonnet') });
      const text = await res.body.text();
      expect(text, url).toContain('three');
      expect(last(text), url).toContain('error');
      expect((await usageRow(account.user.id)).status, url).toBe('aborted');
    }
  });

  it('usage without completion_tokens (or with a count that is no count): the missing count is ours, the call billed and answered', async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c2', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const last = { id: 'c2', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 7, completion_tokens: 'many' } };
    upstream.script = { pieces: [chunk('one two three four'), `data: ${JSON.stringify(last)}\n\n`, 'data: [DONE]\n\n'], end: 'whole' };
    const account = await seedAccount(t.ctx, 1);
    const res = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json' }, body: streamBody('chatgen-4-sonnet') });
    expect(res.statusCode).toBe(200);
    const events = eventsOf(await res.body.text());
    expect(events.map((e) => e.name)).not.toContain('error');
    const row = await usageRow(account.user.id);
    expect(row).toMatchObject({ input_tokens: 7, status: 'ok' });
    expect(Number.isInteger(row.output_tokens) && row.output_tokens > 0).toBe(true);
    expect(Number.isInteger(row.cost) && row.cost > 0).toBe(true);
  });
});
