import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { adminHeaders, createTestApp, type TestApp } from '../harness.ts';
import { sseEvent, startFakeSseScript, type FakeSseScript } from './fake-sse-script.ts';

// One scripted upstream behind a channel of each text protocol, each serving one model alone, and
// a caller of each wire format driven by its vendor's SDK over a real port: a translated stream is
// (caller format, channel protocol) with the two different.

export const SECRET = 'sk-translated-0123456789SECRET';
export type Format = 'messages' | 'chat' | 'responses' | 'gemini';
export const FORMATS: Format[] = ['messages', 'chat', 'responses', 'gemini'];

/** The model a channel of each protocol serves (chat: a chat-completions channel; responses: an openai one). */
export const MODEL: Record<Format, string> = { messages: 'chatgen-4-haiku', chat: 'chatgen-4-sonnet', responses: 'textgen-2.5-pro', gemini: 'textgen-2.5-flash' };
const TYPE: Record<Format, string> = { messages: 'messages', chat: 'chat-completions', responses: 'openai', gemini: 'gemini' };

export interface Rig {
  t: TestApp;
  base: string;
  upstream: FakeSseScript;
  close(): Promise<void>;
}

export async function startRig(): Promise<Rig> {
  const t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  const upstream = await startFakeSseScript();
  for (const f of FORMATS) {
    const payload = { name: `up-${f}`, type: TYPE[f], base_url: upstream.url, secret: SECRET, models: [MODEL[f]], priority: 100 };
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: ['imggen-2'] } });
  return { t, base, upstream, close: async () => (await upstream.close(), await t.close()) };
}

const chatChunk = (delta: object, finish: string | null = null, extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
const geminiChunk = (parts: object[], extra: object = {}) =>
  `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0 }], modelVersion: 'up', responseId: 'up-1', ...extra })}\n\n`;
let seq = 0;
const rev = (type: string, body: object) => sseEvent(type, { type, ...body, sequence_number: seq++ });

/** An upstream of `format` that writes some text, then fails with a message echoing the channel's secret. */
export function failingMidStream(format: Format): string[] {
  const message = `shard overloaded for key ${SECRET}`;
  switch (format) {
    case 'messages':
      return [
        sseEvent('message_start', { type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', content: [], model: 'up', stop_reason: null, stop_sequence: null, usage: { input_tokens: 31, cache_read_input_tokens: 7, cache_creation_input_tokens: 3, output_tokens: 1 } } }) +
          sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
          sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'one two three four five six seven eight ' } }),
        sseEvent('error', { type: 'error', error: { type: 'overloaded_error', message } }),
      ];
    case 'chat':
      return [chatChunk({ role: 'assistant', content: '' }) + chatChunk({ content: 'one two three four five six seven eight ' }), `data: ${JSON.stringify({ error: { message, type: 'server_error', code: 'overloaded', param: null } })}\n\n`];
    case 'responses':
      seq = 0;
      return [
        rev('response.created', { response: { id: 'resp_up', object: 'response', created_at: 1, status: 'in_progress', model: 'up', output: [], usage: null } }) +
          rev('response.output_item.added', { output_index: 0, item: { id: 'msg_up', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }) +
          rev('response.content_part.added', { item_id: 'msg_up', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }) +
          rev('response.output_text.delta', { item_id: 'msg_up', output_index: 0, content_index: 0, delta: 'one two three four five six seven eight ' }),
        rev('response.failed', { response: { id: 'resp_up', object: 'response', created_at: 1, status: 'failed', model: 'up', output: [], error: { code: 'server_error', message }, usage: { input_tokens: 41, input_tokens_details: { cached_tokens: 11 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 50 } } }),
      ];
    case 'gemini':
      return [
        geminiChunk([{ text: 'one two three four five six seven eight ' }], { usageMetadata: { promptTokenCount: 29, cachedContentTokenCount: 4 } }),
        `data: ${JSON.stringify({ error: { code: 503, message, status: 'UNAVAILABLE' } })}\n\n`,
      ];
  }
}

/** Streams one prompt through the caller format's SDK; what it assembled, or the error it threw. */
export async function sdkStream(format: Format, base: string, key: string, model: string, extra: Record<string, unknown> = {}): Promise<{ result?: any; error?: any; events: any[] }> {
  const events: any[] = [];
  try {
    if (format === 'messages') {
      const sdk = new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0 });
      const stream = sdk.messages.stream({ model, max_tokens: 400, messages: [{ role: 'user', content: 'talk' }], ...extra } as any);
      stream.on('streamEvent', (e) => events.push(e));
      return { result: await stream.finalMessage(), events };
    }
    if (format === 'chat') {
      const sdk = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
      const stream = sdk.chat.completions.stream({ model, messages: [{ role: 'user', content: 'talk' }], stream_options: { include_usage: true }, ...extra } as any);
      stream.on('chunk', (e) => events.push(e));
      return { result: await stream.finalChatCompletion(), events };
    }
    if (format === 'responses') {
      const sdk = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
      const stream = sdk.responses.stream({ model, input: 'talk', ...extra } as any);
      stream.on('event', (e) => events.push(e));
      return { result: await stream.finalResponse(), events };
    }
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${base}/gemini`, retryOptions: { attempts: 1 } } });
    const chunks = await ai.models.generateContentStream({ model, contents: 'talk', ...extra } as any);
    for await (const c of chunks) events.push(c);
    return { result: events, events };
  } catch (error) {
    return { error, events };
  }
}

/** The raw SSE text of one streamed call in the caller's format. */
export async function rawStream(format: Format, base: string, key: string, model: string, extra: Record<string, unknown> = {}): Promise<{ status: number; text: string }> {
  const messages = [{ role: 'user', content: 'talk' }];
  const [path, body] =
    format === 'messages' ? ['/v1/messages', { model, max_tokens: 400, stream: true, messages, ...extra }]
    : format === 'chat' ? ['/v1/chat/completions', { model, stream: true, stream_options: { include_usage: true }, messages, ...extra }]
    : format === 'responses' ? ['/v1/responses', { model, stream: true, input: 'talk', ...extra }]
    : [`/gemini/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: 'talk' }] }], ...extra }];
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** A chat upstream that streams two calls with their argument pieces interleaved, then `finish`, with usage by class. */
export function interleavedCalls(finish: 'tool_calls' | 'length'): string[] {
  const call = (index: number, args: string, head?: { id: string; name: string }) =>
    chatChunk({ tool_calls: [{ index, ...(head ? { id: head.id, type: 'function' } : {}), function: { ...(head ? { name: head.name } : {}), arguments: args } }] });
  const tail = finish === 'length' ? [call(0, '"Par')] : [call(0, '"Paris"}'), call(1, '"UTC"}')];
  return [
    chatChunk({ role: 'assistant', content: null }),
    call(0, '', { id: 'call_a', name: 'get_weather' }),
    call(1, '', { id: 'call_b', name: 'get_time' }),
    call(0, '{"city":'),
    call(1, '{"tz":'),
    ...tail,
    chatChunk({}, finish),
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [], usage: { prompt_tokens: 50, prompt_tokens_details: { cached_tokens: 20 }, completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 }, total_tokens: 80 } })}\n\n`,
    'data: [DONE]\n\n',
  ];
}
