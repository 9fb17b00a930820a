// Free-text (`custom`) tools of the Responses API, as Codex declares apply_patch: every other format sees
// a tool taking `{input: string}`, and the answer comes back to the Responses client as a custom call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { FORMATS } from '../src/formats/index.ts';
import { accumulate, sseText, type TextStreamEvent } from '../src/core/text/index.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const GRAMMAR = { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' };
const PATCH = '*** Begin Patch\n*** Add File: "a.txt"\n+hi\n*** End Patch';
const request = {
  model: 'gpt-x',
  input: [
    { role: 'user', content: 'add a file' },
    { type: 'custom_tool_call', call_id: 'c0', name: 'apply_patch', input: 'old patch' },
    { type: 'custom_tool_call_output', call_id: 'c0', output: 'Done' },
    { role: 'user', content: 'again' },
  ],
  tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: GRAMMAR }, { type: 'function', name: 'shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }],
  tool_choice: { type: 'custom', name: 'apply_patch' },
};

describe('a Responses custom tool', () => {
  const neutral = FORMATS.responses.decodeRequest(request);

  it('reaches a messages upstream as a tool taking {input}, its history as tool_use and tool_result', () => {
    const b = FORMATS.messages.encodeRequest(neutral, 'claude-x') as J;
    expect(b.tools[0]).toMatchObject({ name: 'apply_patch', description: 'Edit files', input_schema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } });
    expect(b.messages[1].content).toEqual([{ type: 'tool_use', id: 'c0', name: 'apply_patch', input: { input: 'old patch' } }]);
    expect(b.messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'c0', content: [{ type: 'text', text: 'Done' }] });
    expect(b.tool_choice).toEqual({ type: 'tool', name: 'apply_patch' });
  });

  it('goes back to a Responses upstream as it came', () => {
    const b = FORMATS.responses.encodeRequest(neutral, 'gpt-y') as J;
    expect(b.tools[0]).toEqual({ type: 'custom', name: 'apply_patch', description: 'Edit files', format: GRAMMAR });
    expect(b.input.filter((i: J) => i.type?.startsWith('custom'))).toEqual([
      { type: 'custom_tool_call', call_id: 'c0', name: 'apply_patch', input: 'old patch' },
      { type: 'custom_tool_call_output', call_id: 'c0', output: 'Done' },
    ]);
    expect(b.tool_choice).toEqual({ type: 'custom', name: 'apply_patch' });
  });

  it('a messages answer calling it comes back as a custom_tool_call with the free text', () => {
    const upstream = { id: 'msg_1', model: 'claude-x', content: [{ type: 'tool_use', id: 'c1', name: 'apply_patch', input: { input: PATCH } }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 } };
    const out = FORMATS.responses.encodeAnswer(FORMATS.messages.decodeAnswer(upstream), neutral) as J;
    expect(out.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: PATCH })]);
  });

  describe('streamed', () => {
    let server: Server;
    let base = '';
    let body = '';
    beforeAll(async () => {
      server = createServer((req, res) => req.resume().on('end', () => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(body); }));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('argument pieces from a messages stream become custom_tool_call_input events the OpenAI SDK assembles', async () => {
      const json = JSON.stringify({ input: PATCH });
      const upstream: J[] = [
        { type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'c1', name: 'apply_patch', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(0, 17) } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(17) } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
        { type: 'message_stop' },
      ];
      const dec = FORMATS.messages.streamDecoder();
      const events = upstream.flatMap((e) => dec.push(e));
      const enc = FORMATS.responses.streamEncoder(neutral);
      const frames = events.flatMap((e) => enc.push(e));
      const types = frames.map((f) => f.event);
      expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed']);
      body = sseText(frames);
      const r = await new OpenAI({ apiKey: 'k', baseURL: base, maxRetries: 0 }).responses.stream({ model: 'm', input: 'x' }).finalResponse();
      expect(r.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: PATCH })]);
    });

    it('a Responses upstream streaming free text in pieces gives every other format valid {input} arguments', () => {
      const pieces = ['*** Begin Patch\n', '*** Add File: "a.txt"\n+hi\n', '*** End Patch'];
      const ev = (type: string, rest: J): J => ({ type, ...rest });
      const item = { id: 'ctc_1', type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch' };
      const stream = [
        ev('response.created', { response: { id: 'resp_1', model: 'gpt-x' } }),
        ev('response.output_item.added', { output_index: 0, item: { ...item, input: '' } }),
        ...pieces.map((delta) => ev('response.custom_tool_call_input.delta', { item_id: 'ctc_1', output_index: 0, delta })),
        ev('response.custom_tool_call_input.done', { item_id: 'ctc_1', output_index: 0, input: PATCH }),
        ev('response.output_item.done', { output_index: 0, item: { ...item, input: PATCH } }),
        ev('response.completed', { response: { id: 'resp_1', model: 'gpt-x', status: 'completed', output: [], usage: { input_tokens: 1, output_tokens: 2 } } }),
      ].map((e, i) => ({ ...e, sequence_number: i }));
      const dec = FORMATS.responses.streamDecoder();
      const events: TextStreamEvent[] = stream.flatMap((e) => dec.push(e));
      const answer = accumulate(events);
      expect(answer.stopReason).toBe('tool_use');
      expect(answer.content).toEqual([{ type: 'tool_call', id: 'c1', name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }), custom: true }]);
      expect(JSON.parse((answer.content[0] as J).arguments)).toEqual({ input: PATCH });
      const chat = FORMATS.chat.streamEncoder();
      const calls = events.flatMap((e) => chat.push(e)).flatMap((f) => (f.data === '[DONE]' ? [] : JSON.parse(f.data).choices?.[0]?.delta?.tool_calls ?? []));
      expect(JSON.parse(calls.map((c: J) => c.function.arguments).join(''))).toEqual({ input: PATCH });
    });
  });
});
