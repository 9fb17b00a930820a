// Codex's tools (0.171: function tools, a `namespace` tool grouping its sub-agent functions, the
// hosted `web_search`): decoded without a 400, the namespace ungrouped for other formats and grouped
// again for a Responses upstream, its calls answered with their namespace; the hosted tool kept for
// a Responses upstream only. Likewise Anthropic's and Google's own tools for their formats.
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { UntranslatableField, type TextAnswer } from '../src/core/text/index.ts';
import { responsesEcho } from '../src/formats/responses/echo.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const params = { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] };
const tools = [
  { type: 'function', name: 'exec_command', description: 'Run', strict: false, parameters: params },
  { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn_agent', description: 'Spawn', strict: false, parameters: params }, { type: 'custom', name: 'note' }] },
  { type: 'web_search', external_web_access: true },
];
const body = { model: 'g', input: 'x', tools };

describe("Codex's Responses tools", () => {
  it('a Responses upstream gets them as they came: the namespace grouped, the hosted tool kept', () => {
    const out: J = FORMATS.responses.encodeRequest(FORMATS.responses.decodeRequest(body), 't');
    expect(out.tools).toEqual([tools[0], { ...tools[1], tools: [tools[1]!.tools![0], { type: 'custom', name: 'note' }] }, tools[2]]);
    // A call in the history keeps its namespace.
    const call = { type: 'function_call', call_id: 'call_1', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: '{}' };
    const again: J = FORMATS.responses.encodeRequest(FORMATS.responses.decodeRequest({ ...body, input: [call, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }] }), 't');
    expect(again.input[0]).toEqual({ type: 'function_call', call_id: 'call_1', name: 'spawn_agent', arguments: '{}', namespace: 'multi_agent_v1' });
  });

  it('other formats get the namespaced tools as plain tools, and refuse the hosted one', () => {
    const clientOnly = { ...body, tools: tools.slice(0, 2) };
    const out: J = FORMATS.messages.encodeRequest(FORMATS.responses.decodeRequest(clientOnly), 't');
    expect(out.tools.map((t: J) => t.name)).toEqual(['exec_command', 'spawn_agent', 'note']);
    const err = (() => { try { FORMATS.chat.encodeRequest(FORMATS.responses.decodeRequest(body), 't'); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(UntranslatableField);
    expect((err as UntranslatableField).field).toBe('tools[2].type');
  });

  it('a call to a namespaced tool goes back to the Responses caller with its namespace, whole and streamed', () => {
    const req = FORMATS.responses.decodeRequest(body);
    const answer: TextAnswer = { id: 'resp_1', model: 'g', stopReason: 'tool_use', content: [{ type: 'tool_call', id: 'call_1', name: 'spawn_agent', arguments: '{"cmd":"x"}' }], usage: { input: 1, cache_read: 0, cache_write: 0, output: 1 } };
    const whole: J = FORMATS.responses.encodeAnswer(answer, req);
    expect(whole.output[0]).toMatchObject({ type: 'function_call', namespace: 'multi_agent_v1', name: 'spawn_agent' });
    const encoder = FORMATS.responses.streamEncoder(req);
    const frames = [
      ...encoder.push({ type: 'start', id: 'resp_1', model: 'g' }),
      ...encoder.push({ type: 'block_start', index: 0, block: { type: 'tool_call', id: 'call_1', name: 'spawn_agent' } }),
      ...encoder.push({ type: 'arguments_delta', index: 0, json: '{"cmd":"x"}' }),
      ...encoder.push({ type: 'block_stop', index: 0 }),
    ];
    const items = frames.filter((f) => f.event === 'response.output_item.added' || f.event === 'response.output_item.done').map((f) => JSON.parse(f.data).item);
    expect(items).toEqual([expect.objectContaining({ namespace: 'multi_agent_v1', name: 'spawn_agent' }), expect.objectContaining({ namespace: 'multi_agent_v1', name: 'spawn_agent' })]);
    expect(responsesEcho(req).tools).toHaveLength(3);
  });

  it("Anthropic's and Google's own tools go to an upstream of their format as they came", () => {
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 };
    const fn = { name: 'f', input_schema: { type: 'object', properties: {} } };
    const msgs: J = FORMATS.messages.encodeRequest(FORMATS.messages.decodeRequest({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [fn, search] }), 't');
    expect(msgs.tools).toEqual([fn, search]);
    const decl = { name: 'f', parametersJsonSchema: { type: 'object', properties: {} } };
    const gem: J = FORMATS.gemini.encodeRequest(FORMATS.gemini.decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [decl] }, { googleSearch: {} }] }, 'g'), 't');
    expect(gem.tools).toEqual([{ functionDeclarations: [decl] }, { googleSearch: {} }]);
  });
});
