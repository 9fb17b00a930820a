import { describe, expect, it } from 'vitest';
import type { TextChunk, TextRequest } from '../src/core/text/provider.ts';
import { forwardWire } from '../src/providers/wire-forward.ts';

// A same-format stream (chat, Responses, Gemini) is forwarded as the bytes that came, cut at whole
// events: however the upstream's bytes are split into reads, the caller gets the same bytes and the
// call the same usage and finish.

const request: TextRequest = { model: 'm', messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], maxTokens: 16 };
const chat = (delta: object, finish: string | null = null, usage?: object) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}`;

const responses = (type: string, rest: object = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...rest })}`;
const response = { id: 'resp_1', object: 'response', status: 'completed', model: 'm', output: [], usage: { input_tokens: 5, output_tokens: 4, input_tokens_details: { cached_tokens: 1 } } };

const STREAMS: Record<string, ['chat' | 'responses', string]> = {
  'chat, LF': ['chat', [chat({ role: 'assistant', content: '' }), chat({ content: 'héllo\n\nworld' }), chat({}, 'stop'), chat({}, null, { prompt_tokens: 5, completion_tokens: 4 }), 'data: [DONE]'].join('\n\n') + '\n\n'],
  'chat, CRLF': ['chat', [chat({ content: 'a' }), chat({}, 'length'), chat({}, null, { prompt_tokens: 3, completion_tokens: 2 }), 'data: [DONE]'].join('\r\n\r\n') + '\r\n\r\n'],
  responses: ['responses', [responses('response.created', { response: { ...response, status: 'in_progress', usage: null } }), responses('response.output_text.delta', { delta: 'héllo\n\nworld' }), responses('response.output_text.done', { text: 'héllo' }), responses('response.completed', { response })].join('\n\n') + '\n\n'],
};

/** The stream as the upstream's socket reads, cut before each of `cuts`. */
async function* readsOf(stream: Buffer, cuts: number[]) {
  let at = 0;
  for (const cut of [...cuts, stream.length]) {
    yield stream.subarray(at, cut);
    at = cut;
  }
}

async function run(format: 'chat' | 'responses', stream: Buffer, cuts: number[]) {
  const parts: Buffer[] = [];
  let end: TextChunk | undefined;
  for await (const chunk of forwardWire(format, async () => readsOf(stream, cuts), request, false)) {
    if (chunk.type === 'events') parts.push(...chunk.parts);
    if (chunk.type === 'end') end = chunk;
  }
  // A block holding an event the gateway reads goes out with LF separators, one without as it came:
  // CRLF separators may become LF, depending on where the reads were cut.
  return { bytes: Buffer.concat(parts).toString('utf8').replaceAll('\r\n', '\n'), end };
}

describe('forwardWire, however the reads are cut', () => {
  it.each(Object.entries(STREAMS))('%s', async (_, [format, text]) => {
    const stream = Buffer.from(text);
    const whole = await run(format, stream, []);
    expect(whole.end).toMatchObject({ type: 'end', usage: { input: expect.any(Number), output: expect.any(Number) } });
    for (let a = 1; a < stream.length; a++) {
      expect(await run(format, stream, [a]), `cut at ${a}`).toEqual(whole);
      for (let b = a + 1; b < stream.length; b += 11) expect(await run(format, stream, [a, b]), `cuts at ${a}, ${b}`).toEqual(whole);
    }
  });
});

describe("an upstream's error event ends a forwarded stream", () => {
  const before = [responses('response.created', { response: { ...response, status: 'in_progress', usage: null } }), responses('response.output_text.delta', { delta: 'half' })];
  const after = responses('response.output_text.delta', { delta: 'never sent' });
  const ERRORS: Record<string, ['chat' | 'responses', string[], string]> = {
    'responses, named': ['responses', before, responses('error', { code: 'server_error', message: 'overloaded' })],
    'responses, without its event line': ['responses', before, `data: ${JSON.stringify({ type: 'error', code: 'server_error', message: 'overloaded' })}`],
    // As some Responses servers write it (LiteLLM's ErrorEvent): the error's fields nested.
    'responses, its fields nested': ['responses', before, responses('error', { error: { type: 'server_error', code: 'server_error', message: 'overloaded' } })],
    chat: ['chat', [chat({ role: 'assistant', content: 'half' })], `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}`],
  };
  it.each(Object.entries(ERRORS))('%s: the events before it go on, then the call fails with its message', async (_, [format, events, error]) => {
    const head = events.join('\n\n') + '\n\n';
    const stream = Buffer.from(head + [error, after].join('\n\n') + '\n\n');
    for (const cuts of [[], [head.length], [head.length + 3], [7, stream.length - 5]]) {
      const parts: Buffer[] = [];
      const failed = (async () => {
        for await (const chunk of forwardWire(format, async () => readsOf(stream, cuts), request, false)) if (chunk.type === 'events') parts.push(...chunk.parts);
      })();
      await expect(failed, `cuts at ${cuts}`).rejects.toThrow(/overloaded/);
      expect(Buffer.concat(parts).toString('utf8'), `cuts at ${cuts}`).toBe(head);
    }
  });
});
