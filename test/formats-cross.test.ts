// Every ordered pair of the four wire formats, over the fields of the neutral model: a client's body in
// format A -> what an upstream of format B receives -> B's answer -> what the client reads back in A.
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import type { WireFormat } from '../src/core/text/index.ts';
import { ANSWERS, OUT_SCHEMA, PDF, PNG, REQUESTS, TIME_SCHEMA, WEATHER_SCHEMA } from './support/format-fixtures.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const ALL: WireFormat[] = ['messages', 'chat', 'responses', 'gemini'];
const PAIRS = ALL.flatMap((a) => ALL.filter((b) => b !== a).map((b) => [a, b] as const));
const midSystem = (a: WireFormat) => a !== 'gemini';

/** What each target must receive for the fixture conversation, field by field. */
const received: Record<WireFormat, (b: J, from: WireFormat) => void> = {
  messages(b, from) {
    expect(b.model).toBe('target-model');
    expect(b.system).toEqual(from === 'gemini' ? [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }] : 'Be brief.');
    const blocks = b.messages.flatMap((m: J) => m.content.map((c: J) => ({ role: m.role, ...c })));
    expect(blocks).toContainEqual(expect.objectContaining({ role: 'user', type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }));
    expect(blocks).toContainEqual(expect.objectContaining({ role: 'user', type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }));
    expect(blocks.filter((c: J) => c.type === 'tool_use')).toEqual([
      { role: 'assistant', type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { role: 'assistant', type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'CET' } },
    ]);
    const results = blocks.filter((c: J) => c.type === 'tool_result');
    expect(results.map((r: J) => [r.role, r.tool_use_id])).toEqual([['user', 'call_1'], ['user', 'call_2']]);
    expect(results[0].content).toEqual([{ type: 'text', text: '18C' }]);
    if (midSystem(from)) expect(b.messages).toContainEqual({ role: 'system', content: [{ type: 'text', text: 'Answer in French.' }] });
    expect(blocks.at(-1)).toEqual({ role: 'user', type: 'text', text: 'Summarize.' });
    expect(b.tools.map((t: J) => [t.name, t.input_schema])).toEqual([['get_weather', WEATHER_SCHEMA], ['get_time', TIME_SCHEMA]]);
    expect(b.tool_choice).toEqual({ type: 'any' });
    // Anthropic takes no thinking with a forced tool call: the call stays, thinking goes, the effort stays.
    expect(b.thinking).toEqual({ type: 'disabled' });
    expect(b.output_config).toEqual({ effort: 'high', format: { type: 'json_schema', schema: OUT_SCHEMA } });
    expect([b.max_tokens, b.temperature, b.top_p]).toEqual([1000, 0.5, 0.9]);
  },
  chat(b, from) {
    expect(b.model).toBe('target-model');
    expect(b.messages[0]).toEqual(from === 'gemini'
      ? { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }] }
      : { role: 'system', content: 'Be brief.' });
    const user = b.messages[1];
    expect(user.role).toBe('user');
    expect(user.content).toContainEqual({ type: 'image_url', image_url: expect.objectContaining({ url: `data:image/png;base64,${PNG}` }) });
    expect(user.content).toContainEqual({ type: 'file', file: expect.objectContaining({ file_data: `data:application/pdf;base64,${PDF}` }) });
    const assistant = b.messages.find((m: J) => m.role === 'assistant');
    expect(assistant.content).toBe('Calling tools.');
    expect(assistant.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
    const tools = b.messages.filter((m: J) => m.role === 'tool');
    expect(tools).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: '18C' }, { role: 'tool', tool_call_id: 'call_2', content: 'Error: 12:00' }]);
    if (midSystem(from)) expect(b.messages).toContainEqual({ role: from === 'messages' ? 'system' : 'developer', content: 'Answer in French.' });
    expect(b.messages.at(-1)).toEqual({ role: 'user', content: 'Summarize.' });
    expect(b.tools.map((t: J) => [t.type, t.function.name, t.function.parameters])).toEqual([['function', 'get_weather', WEATHER_SCHEMA], ['function', 'get_time', TIME_SCHEMA]]);
    expect(b.tool_choice).toBe('required');
    expect(b.reasoning_effort).toBe('high');
    expect(b.response_format).toEqual({ type: 'json_schema', json_schema: expect.objectContaining({ schema: OUT_SCHEMA }) });
    expect([b.max_completion_tokens, b.temperature, b.top_p, b.max_tokens]).toEqual([1000, 0.5, 0.9, undefined]);
  },
  responses(b, from) {
    expect(b.model).toBe('target-model');
    expect(b.instructions).toBe(from === 'gemini' ? 'Be brief.\n\nAnswer in French.' : 'Be brief.');
    const user = b.input[0];
    expect(user.role).toBe('user');
    expect(user.content).toContainEqual({ type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' });
    expect(user.content).toContainEqual(expect.objectContaining({ type: 'input_file', file_data: `data:application/pdf;base64,${PDF}` }));
    expect(b.input).toContainEqual({ type: 'message', role: 'assistant', content: 'Calling tools.' });
    expect(b.input.filter((i: J) => i.type === 'function_call')).toEqual([
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{"tz":"CET"}' },
    ]);
    expect(b.input.filter((i: J) => i.type === 'function_call_output').map((i: J) => [i.call_id, i.output])).toEqual([['call_1', '18C'], ['call_2', 'Error: 12:00']]);
    if (midSystem(from)) expect(b.input).toContainEqual({ type: 'message', role: from === 'messages' ? 'system' : 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] });
    expect(b.input.at(-1)).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Summarize.' }] });
    expect(b.tools.map((t: J) => [t.type, t.name, t.parameters, t.strict])).toEqual([['function', 'get_weather', WEATHER_SCHEMA, false], ['function', 'get_time', TIME_SCHEMA, false]]);
    expect(b.tool_choice).toBe('required');
    expect(b.reasoning.effort).toBe('high');
    expect(b.text.format).toEqual(expect.objectContaining({ type: 'json_schema', schema: OUT_SCHEMA }));
    expect([b.max_output_tokens, b.temperature, b.top_p, b.store]).toEqual([1000, 0.5, 0.9, false]);
  },
  gemini(b) {
    expect(b.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    expect(b.contents.map((c: J) => c.role)).toEqual(['user', 'model', 'user']);
    expect(b.contents[0].parts).toEqual([{ text: 'Look at these.' }, { inlineData: { mimeType: 'image/png', data: PNG } }, { inlineData: { mimeType: 'application/pdf', data: PDF } }]);
    expect(b.contents[1].parts).toEqual([
      { text: 'Calling tools.' },
      { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } },
      { functionCall: { id: 'call_2', name: 'get_time', args: { tz: 'CET' } } },
    ]);
    const responses = b.contents[2].parts.filter((p: J) => p.functionResponse).map((p: J) => p.functionResponse);
    expect(responses[0]).toEqual({ id: 'call_1', name: 'get_weather', response: { output: '18C' } });
    expect(responses[1]).toMatchObject({ id: 'call_2', name: 'get_time' });
    expect(b.contents[2].parts.at(-1)).toEqual({ text: 'Summarize.' });
    expect(b.tools).toEqual([{ functionDeclarations: [
      { name: 'get_weather', description: 'Weather now', parametersJsonSchema: WEATHER_SCHEMA },
      { name: 'get_time', description: 'Time now', parametersJsonSchema: TIME_SCHEMA },
    ] }]);
    expect(b.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(b.generationConfig).toMatchObject({ maxOutputTokens: 1000, temperature: 0.5, topP: 0.9, responseMimeType: 'application/json', responseJsonSchema: OUT_SCHEMA });
    expect(b.generationConfig.thinkingConfig.thinkingBudget).toBeGreaterThan(8192);
  },
};

interface Seen { text: string; thinking?: string; calls: Array<[string, string, unknown]>; stop: string; usage: J }

/** What a client of each format reads in the answer: text, thinking, calls, stop reason and usage, in its own terms. */
const read: Record<WireFormat, (a: J) => Seen> = {
  messages: (a) => ({
    text: a.content.filter((c: J) => c.type === 'text').map((c: J) => c.text).join(''),
    thinking: a.content.find((c: J) => c.type === 'thinking')?.thinking,
    calls: a.content.filter((c: J) => c.type === 'tool_use').map((c: J) => [c.id, c.name, c.input]),
    stop: a.stop_reason,
    usage: a.usage,
  }),
  chat: (a) => ({
    text: a.choices[0].message.content,
    calls: a.choices[0].message.tool_calls.map((c: J) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
    stop: a.choices[0].finish_reason,
    usage: a.usage,
  }),
  responses: (a) => ({
    text: a.output.filter((o: J) => o.type === 'message').flatMap((o: J) => o.content.map((c: J) => c.text)).join(''),
    thinking: a.output.find((o: J) => o.type === 'reasoning')?.summary[0]?.text,
    calls: a.output.filter((o: J) => o.type === 'function_call').map((o: J) => [o.call_id, o.name, JSON.parse(o.arguments)]),
    stop: a.status,
    usage: a.usage,
  }),
  gemini: (a) => {
    const parts = a.candidates[0].content.parts;
    return {
      text: parts.filter((p: J) => p.text !== undefined && !p.thought).map((p: J) => p.text).join(''),
      thinking: parts.find((p: J) => p.thought)?.text,
      calls: parts.filter((p: J) => p.functionCall).map((p: J) => [p.functionCall.id, p.functionCall.name, p.functionCall.args]),
      stop: a.candidates[0].finishReason,
      usage: a.usageMetadata,
    };
  },
};

const STOP_FOR_TOOLS: Record<WireFormat, string> = { messages: 'tool_use', chat: 'tool_calls', responses: 'completed', gemini: 'STOP' };

/** The fixture usage (100 uncached, 20 cached, 5 written where reported, 50 out with 10 thinking) in each client's terms. */
const usageSeen = (a: WireFormat, write: number): J => ({
  messages: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: write, output_tokens: 50, output_tokens_details: { thinking_tokens: 10 } },
  chat: { prompt_tokens: 120 + write, completion_tokens: 50, total_tokens: 170 + write, prompt_tokens_details: { cached_tokens: 20, ...(write ? { cache_write_tokens: write } : {}) }, completion_tokens_details: { reasoning_tokens: 10 } },
  responses: { input_tokens: 120 + write, input_tokens_details: { cached_tokens: 20, cache_write_tokens: write }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 170 + write },
  gemini: { promptTokenCount: 120 + write, cachedContentTokenCount: 20, candidatesTokenCount: 40, thoughtsTokenCount: 10, totalTokenCount: 170 + write },
})[a];

describe.each(PAIRS)('%s client, %s upstream', (a, b) => {
  it('the upstream receives every field of the request in its own terms', () => {
    const neutral = FORMATS[a].decodeRequest(REQUESTS[a], 'gemini-x');
    received[b](FORMATS[b].encodeRequest(neutral, 'target-model'), a);
  });

  it('the client reads the upstream answer back: thinking, text, parallel calls, stop reason, usage by class', () => {
    const answer = FORMATS[b].decodeAnswer(ANSWERS[b]);
    const seen = read[a](FORMATS[a].encodeAnswer(answer));
    expect(seen.text).toBe('Bonjour');
    expect(seen.calls).toEqual([['call_a', 'get_weather', { city: 'Lyon' }], ['call_b', 'get_time', { tz: 'UTC' }]]);
    expect(seen.stop).toBe(STOP_FOR_TOOLS[a]);
    if (a !== 'chat' && b !== 'chat') expect(seen.thinking).toBe('Need both.');
    expect(seen.usage).toEqual(usageSeen(a, b === 'gemini' ? 0 : 5));
  });
});

describe('opaque values come home', () => {
  // A client of A keeps B's signature or encrypted reasoning in its history; sent back, B gets its own bytes.
  const history: Record<string, (answer: J) => J> = {
    messages: (ans) => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: ans.content }, { role: 'user', content: 'go on' }] }),
    responses: (ans) => ({ model: 'm', input: [{ role: 'user', content: 'hi' }, ...ans.output, { role: 'user', content: 'go on' }] }),
    gemini: (ans) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }, ans.candidates[0].content, { role: 'user', parts: [{ text: 'go on' }] }] }),
  };
  const own: Record<string, (body: J) => unknown> = {
    messages: (body) => body.messages[1].content.find((c: J) => c.type === 'thinking')?.signature,
    responses: (body) => body.input.find((i: J) => i.type === 'reasoning')?.encrypted_content,
    gemini: (body) => body.contents[1].parts.find((p: J) => p.thought)?.thoughtSignature,
  };
  // A Gemini signature on a function call has no place in the other formats' calls: only thought signatures travel.
  const value: Record<string, string> = { messages: 'sig-anthropic', responses: 'enc-openai', gemini: 'sig-google-thought' };
  const pairs = Object.keys(history).flatMap((a) => Object.keys(history).filter((b) => b !== a).map((b) => [a, b]));
  it.each(pairs)('%s client holding a %s value', (a, b) => {
    const clientAnswer = FORMATS[a as WireFormat].encodeAnswer(FORMATS[b as WireFormat].decodeAnswer(ANSWERS[b as WireFormat]));
    const next = FORMATS[a as WireFormat].decodeRequest(history[a](clientAnswer), 'm');
    expect(own[b](FORMATS[b as WireFormat].encodeRequest(next, 'm'))).toBe(value[b]);
    // and nobody else receives it
    for (const c of Object.keys(own).filter((c) => c !== b)) expect(JSON.stringify(FORMATS[c as WireFormat].encodeRequest(next, 'm'))).not.toContain(value[b]);
  });
});
