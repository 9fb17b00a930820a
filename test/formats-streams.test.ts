// Streams: each format's recorded event sequence decodes to the neutral events of its whole answer, and
// re-encodes into every format's exact sequence; the official SDKs' stream accumulators assemble the
// same tool calls out of what the encoders wrote.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { FORMATS } from '../src/formats/index.ts';
import { accumulate, sseText, type TextAnswer, type TextStreamEvent, type WireFormat } from '../src/core/text/index.ts';
import { ANSWERS } from './support/format-fixtures.ts';
import { STREAMS } from './support/format-streams.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const ALL: WireFormat[] = ['messages', 'chat', 'responses', 'gemini'];

const decodeAll = (f: WireFormat, events: readonly unknown[]): TextStreamEvent[] => {
  const dec = FORMATS[f].streamDecoder();
  return [...events.flatMap((e) => dec.push(e)), ...dec.end()];
};

/** The SSE text an encoder writes, read back the way a client parses it. */
const encodeAll = (f: WireFormat, events: TextStreamEvent[], includeUsage = true): { text: string; data: unknown[]; names: Array<string | undefined> } => {
  const enc = FORMATS[f].streamEncoder({ model: 'm', messages: [], streamUsage: includeUsage });
  const text = sseText(events.flatMap((e) => enc.push(e)));
  const frames = text.split('\n\n').filter(Boolean).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)![1];
    return { event, data: data === '[DONE]' ? '[DONE]' : JSON.parse(data) };
  });
  return { text, data: frames.map((f) => f.data), names: frames.map((f) => f.event) };
};

/** What survives in a target: chat has no thinking, only Gemini carries a signature on a call, and item ids are the target's. */
const seenBy = (target: WireFormat, a: TextAnswer, source: WireFormat): unknown => ({
  stopReason: a.stopReason,
  usage: source === 'gemini' || target === 'gemini' ? { ...a.usage, input: a.usage.input + a.usage.cache_write, cache_write: 0 } : a.usage,
  content: a.content
    .filter((p) => !(p.type === 'thinking' && (target === 'chat' || source === 'chat')))
    .map((p) => {
      if (p.type === 'tool_call') return target === 'gemini' && source === 'gemini' ? p : { ...p, signature: undefined };
      if (p.type === 'thinking') return { type: 'thinking', text: p.text, signature: p.signature && { format: p.signature.format, value: p.signature.value } };
      return { type: 'text', text: p.text };
    })
    .map((p) => JSON.parse(JSON.stringify(p))),
});

describe.each(ALL)('%s stream', (f) => {
  it('decodes to the neutral events of its whole answer, tool-call argument pieces assembled', () => {
    const events = decodeAll(f, STREAMS[f]);
    expect(events.at(-1)?.type).toBe('finish');
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    const streamed = accumulate(events);
    const whole = FORMATS[f].decodeAnswer(ANSWERS[f]);
    expect(seenBy(f, streamed, f)).toEqual(seenBy(f, whole, f));
    expect(streamed.content.filter((p) => p.type === 'tool_call').map((p) => JSON.parse((p as J).arguments))).toEqual([{ city: 'Lyon' }, { tz: 'UTC' }]);
  });

  it('cut midway, it ends without a finish', () => {
    const cut = STREAMS[f].slice(0, 4);
    const events = decodeAll(f, cut);
    expect(events[0].type).toBe('start');
    expect(events.some((e) => e.type === 'finish')).toBe(false);
  });

  it.each(ALL)('re-encodes as a %s stream that decodes to the same answer', (target) => {
    const source = accumulate(decodeAll(f, STREAMS[f]));
    const { data } = encodeAll(target, decodeAll(f, STREAMS[f]));
    const back = accumulate(decodeAll(target, data));
    expect(seenBy(target, back, f)).toEqual(seenBy(target, source, f));
  });
});

it('a chat upstream that ends without [DONE] after its finish reason and usage still finishes', () => {
  const events = decodeAll('chat', STREAMS.chat.slice(0, -1));
  expect(events.at(-1)).toMatchObject({ type: 'finish', stopReason: 'tool_use', usage: { input: 100, cache_read: 20, cache_write: 5, output: 50 } });
});

it('a chat upstream that gives its tool calls no index (Gemini\'s compatible API) still makes one call per id', () => {
  const chunk = (delta: J, finish: string | null = null) => ({ id: 'c', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = decodeAll('chat', [
    chunk({ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }, { id: 'b', function: { arguments: '' } }] }),
    chunk({}, 'tool_calls'),
    '[DONE]',
  ]);
  expect(accumulate(events).content).toEqual([
    { type: 'tool_call', id: 'a', name: 'f', arguments: '{"x":1}' },
    { type: 'tool_call', id: 'b', name: 'g', arguments: '{}' },
  ]);
});

it('a vendor error mid-stream becomes an error event in every format', () => {
  const events = [...decodeAll('messages', STREAMS.messages.slice(0, 3)), ...FORMATS.messages.streamDecoder().push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })];
  expect(events.at(-1)).toEqual({ type: 'error', message: 'Overloaded', code: 'overloaded_error' });
  for (const f of ALL) {
    const out = encodeAll(f, events).data.at(-1) as J;
    expect(JSON.stringify(out)).toContain('Overloaded');
    expect(accumulate(decodeAll(f, [out])).content).toEqual([]);
    expect(decodeAll(f, [out]).map((e) => e.type)).toContain('error');
  }
});

describe('exact sequences', () => {
  const events = decodeAll('messages', STREAMS.messages);

  it('messages: message_start, blocks in order, message_delta with usage, message_stop; SSE event names match types', () => {
    const { data, names } = encodeAll('messages', events);
    expect(names).toEqual(data.map((d: J) => d.type));
    const noPing = (types: string[]) => types.filter((t) => t !== 'ping');
    expect(noPing(data.map((d: J) => d.type))).toEqual(noPing((STREAMS.messages as J[]).map((e) => e.type)));
    expect(data.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 5, output_tokens: 50 } });
  });

  it('chat: role chunk, content, tool_calls by index, finish_reason, the usage chunk only when asked, [DONE]', () => {
    const withUsage = encodeAll('chat', events).data as J[];
    expect(withUsage.at(-1)).toBe('[DONE]');
    expect(withUsage.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 125, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 20 } } });
    expect(withUsage.at(-3)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] });
    const calls = withUsage.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls.filter((c: J) => c.id).map((c: J) => [c.index, c.id, c.function.name])).toEqual([[0, 'call_a', 'get_weather'], [1, 'call_b', 'get_time']]);
    const without = encodeAll('chat', events, false).data as J[];
    expect(without.some((c) => c !== '[DONE]' && c.usage)).toBe(false);
  });

  it('responses: the full numbered sequence from response.created to response.completed', () => {
    const { data, names } = encodeAll('responses', events);
    expect(names).toEqual(data.map((d: J) => d.type));
    expect(data.map((d: J) => d.sequence_number)).toEqual(data.map((_, i) => i));
    expect(data.map((d: J) => d.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    const done = data.at(-1) as J;
    expect(done.response.status).toBe('completed');
    expect(done.response.output.map((o: J) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(done.response.usage).toEqual({ input_tokens: 125, input_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 175 });
  });

  it('gemini: whole function calls, a finish chunk with usageMetadata, no event names', () => {
    const { data, names } = encodeAll('gemini', events);
    expect(names.every((n) => n === undefined)).toBe(true);
    const parts = (data as J[]).flatMap((c) => c.candidates[0].content.parts);
    expect(parts.filter((p: J) => p.functionCall).map((p: J) => p.functionCall)).toEqual([
      { id: 'call_a', name: 'get_weather', args: { city: 'Lyon' } },
      { id: 'call_b', name: 'get_time', args: { tz: 'UTC' } },
    ]);
    expect((data.at(-1) as J).candidates[0].finishReason).toBe('STOP');
    expect((data.at(-1) as J).usageMetadata).toEqual({ promptTokenCount: 125, cachedContentTokenCount: 20, candidatesTokenCount: 40, thoughtsTokenCount: 10, totalTokenCount: 175 });
  });
});

describe('the official SDKs assemble what the encoders write', () => {
  let server: Server;
  let base = '';
  let body = '';
  beforeAll(async () => {
    // A real local server stands in for the vendor: it answers any request with the stream under test.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  describe.each(ALL)('from a %s upstream stream', (source) => {
    const events = () => decodeAll(source, STREAMS[source]);

    it('Anthropic MessageStream', async () => {
      body = encodeAll('messages', events()).text;
      const sdk = new Anthropic({ apiKey: 'k', baseURL: base, maxRetries: 0 });
      const msg = await sdk.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      expect(msg.content.filter((c) => c.type === 'tool_use').map((c: J) => [c.id, c.name, c.input])).toEqual([['call_a', 'get_weather', { city: 'Lyon' }], ['call_b', 'get_time', { tz: 'UTC' }]]);
      expect(msg.content.find((c) => c.type === 'text')).toMatchObject({ text: 'Bonjour' });
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 50 });
    });

    it('OpenAI ChatCompletionStream', async () => {
      body = encodeAll('chat', events()).text;
      const sdk = new OpenAI({ apiKey: 'k', baseURL: base, maxRetries: 0 });
      const done = await sdk.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } }).finalChatCompletion();
      const m = done.choices[0].message;
      expect(m.content).toBe('Bonjour');
      expect(m.tool_calls?.map((c: J) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([['call_a', 'get_weather', { city: 'Lyon' }], ['call_b', 'get_time', { tz: 'UTC' }]]);
      expect(done.choices[0].finish_reason).toBe('tool_calls');
      expect(done.usage?.completion_tokens).toBe(50);
    });

    it('OpenAI ResponseStream', async () => {
      body = encodeAll('responses', events()).text;
      const sdk = new OpenAI({ apiKey: 'k', baseURL: base, maxRetries: 0 });
      const r = await sdk.responses.stream({ model: 'm', input: 'x' }).finalResponse();
      expect(r.output_text).toBe('Bonjour');
      expect(r.output.filter((o) => o.type === 'function_call').map((o: J) => [o.call_id, o.name, JSON.parse(o.arguments)])).toEqual([['call_a', 'get_weather', { city: 'Lyon' }], ['call_b', 'get_time', { tz: 'UTC' }]]);
      expect(r.usage?.output_tokens).toBe(50);
    });

    it('Google GenAI generateContentStream', async () => {
      body = encodeAll('gemini', events()).text;
      const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: base } });
      const calls: J[] = [];
      let text = '';
      let last: J;
      for await (const c of await ai.models.generateContentStream({ model: 'm', contents: 'x' })) {
        calls.push(...(c.functionCalls ?? []));
        text += c.candidates?.[0]?.content?.parts?.filter((p) => !p.thought && p.text).map((p) => p.text).join('') ?? '';
        last = c;
      }
      expect(text).toBe('Bonjour');
      expect(calls.map((c) => [c.id, c.name, c.args])).toEqual([['call_a', 'get_weather', { city: 'Lyon' }], ['call_b', 'get_time', { tz: 'UTC' }]]);
      expect(last.candidates[0].finishReason).toBe('STOP');
    });
  });
});
