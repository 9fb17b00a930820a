// The translation rules one field at a time: stop reasons both ways, thinking settings, tool choice,
// limits, and the fields carried as they are.
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { DEFAULT_MAX_TOKENS } from '../src/formats/messages/index.ts';
import { geminiPath } from '../src/formats/gemini/index.ts';
import { type StopReason, type TextAnswer, type TextStreamEvent, type WireFormat } from '../src/core/text/index.ts';
import { PNG } from './support/format-fixtures.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const to = (from: WireFormat, body: unknown, target: WireFormat, model = 'm'): J => FORMATS[target].encodeRequest(FORMATS[from].decodeRequest(body, model), 't');
const chat = (extra: J, messages: J[] = [{ role: 'user', content: 'hi' }]) => ({ model: 'g', messages, ...extra });
const msgs = (extra: J, messages: J[] = [{ role: 'user', content: 'hi' }]) => ({ model: 'c', max_tokens: 100, messages, ...extra });

const answer = (stopReason: StopReason, withCall = false): TextAnswer => ({
  id: 'a1', model: 'x', stopReason, stopSequence: stopReason === 'stop_sequence' ? 'END' : undefined,
  content: [{ type: 'text', text: 'hi' }, ...(withCall ? [{ type: 'tool_call' as const, id: 'c1', name: 'f', arguments: '{}' }] : [])],
  usage: { input: 1, cache_read: 0, cache_write: 0, output: 1 },
});

describe('stop reasons, both ways', () => {
  const wire: Record<WireFormat, (b: J) => unknown> = {
    messages: (b) => b.stop_reason, chat: (b) => b.choices[0].finish_reason, responses: (b) => [b.status, b.incomplete_details?.reason ?? null], gemini: (b) => b.candidates[0].finishReason,
  };
  const table: Array<[WireFormat, StopReason, unknown, StopReason]> = [
    ['messages', 'end_turn', 'end_turn', 'end_turn'],
    ['messages', 'max_tokens', 'max_tokens', 'max_tokens'],
    ['messages', 'stop_sequence', 'stop_sequence', 'stop_sequence'],
    ['messages', 'tool_use', 'tool_use', 'tool_use'],
    ['messages', 'refusal', 'refusal', 'refusal'],
    ['chat', 'end_turn', 'stop', 'end_turn'],
    ['chat', 'max_tokens', 'length', 'max_tokens'],
    ['chat', 'stop_sequence', 'stop', 'end_turn'],
    ['chat', 'tool_use', 'tool_calls', 'tool_use'],
    ['chat', 'refusal', 'content_filter', 'refusal'],
    ['responses', 'end_turn', ['completed', null], 'end_turn'],
    ['responses', 'max_tokens', ['incomplete', 'max_output_tokens'], 'max_tokens'],
    ['responses', 'tool_use', ['completed', null], 'tool_use'],
    ['gemini', 'end_turn', 'STOP', 'end_turn'],
    ['gemini', 'max_tokens', 'MAX_TOKENS', 'max_tokens'],
    ['gemini', 'tool_use', 'STOP', 'tool_use'],
    ['gemini', 'refusal', 'SAFETY', 'refusal'],
  ];
  it.each(table)('%s: %s is written %j and read back as %s', (f, neutral, written, back) => {
    const body = FORMATS[f].encodeAnswer(answer(neutral, neutral === 'tool_use'));
    expect(wire[f](body)).toEqual(written);
    expect(FORMATS[f].decodeAnswer(body).stopReason).toBe(back);
  });

  it('a call cut off by max tokens: an incomplete Responses item; left out of a Gemini answer, kept if whole', () => {
    const cut: TextAnswer = { ...answer('max_tokens'), content: [{ type: 'text', text: 'hi' }, { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"city":"Par' }] };
    expect((FORMATS.responses.encodeAnswer(cut) as J).output.find((i: J) => i.type === 'function_call').status).toBe('incomplete');
    expect((FORMATS.gemini.encodeAnswer(cut) as J).candidates[0].content.parts).toEqual([{ text: 'hi' }]);
    const whole: TextAnswer = { ...cut, content: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: '{"city":"Paris"}' }] };
    expect((FORMATS.responses.encodeAnswer(whole) as J).output[0].status).toBe('completed');
    expect((FORMATS.gemini.encodeAnswer(whole) as J).candidates[0].content.parts[0].functionCall.args).toEqual({ city: 'Paris' });
  });

  it('messages keeps the stop sequence that ended the answer', () => {
    const body = FORMATS.messages.encodeAnswer(answer('stop_sequence')) as J;
    expect(body.stop_sequence).toBe('END');
    expect(FORMATS.messages.decodeAnswer(body).stopSequence).toBe('END');
  });

  it('vendor-only reasons map to the nearest neutral one', () => {
    const m = (stop: string) => FORMATS.messages.decodeAnswer({ id: 'x', model: 'm', content: [], stop_reason: stop, usage: {} }).stopReason;
    expect([m('pause_turn'), m('model_context_window_exceeded')]).toEqual(['end_turn', 'max_tokens']);
    const g = (finish: string) => FORMATS.gemini.decodeAnswer({ candidates: [{ content: { parts: [] }, finishReason: finish }] }).stopReason;
    expect([g('RECITATION'), g('PROHIBITED_CONTENT'), g('OTHER')]).toEqual(['refusal', 'refusal', 'end_turn']);
    expect(FORMATS.gemini.decodeAnswer({ promptFeedback: { blockReason: 'SAFETY' } }).stopReason).toBe('refusal');
    expect(FORMATS.responses.decodeAnswer({ id: 'r', model: 'm', output: [], status: 'incomplete', incomplete_details: { reason: 'content_filter' } }).stopReason).toBe('refusal');
  });

  it('a chat answer with calls that says `stop` (OpenAI does when tool_choice forced the call) stopped for its calls', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const whole = (finish: string) => FORMATS.chat.decodeAnswer({ id: 'x', model: 'm', choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: null, tool_calls: [call] } }] }).stopReason;
    expect([whole('stop'), whole('length')]).toEqual(['tool_use', 'max_tokens']);
    const dec = FORMATS.chat.streamDecoder();
    const chunk = (delta: J, finish: string | null = null) => ({ id: 'x', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
    const events = [chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }), chunk({}, 'stop'), '[DONE]'].flatMap((e) => dec.push(e));
    expect(events.at(-1)).toMatchObject({ type: 'finish', stopReason: 'tool_use' });
  });
});

describe('thinking and reasoning settings', () => {
  it('a messages budget becomes an effort bucket for OpenAI and the same budget for Gemini', () => {
    const body = msgs({ max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: 5000 } });
    expect(to('messages', body, 'chat').reasoning_effort).toBe('medium');
    expect(to('messages', body, 'responses').reasoning).toEqual({ effort: 'medium' });
    expect(to('messages', body, 'responses').include).toEqual(['reasoning.encrypted_content']);
    expect(to('messages', body, 'gemini').generationConfig.thinkingConfig).toEqual({ thinkingBudget: 5000 });
  });

  it('off is off everywhere: an explicit off goes as the target says it; the messages API\'s off (its default) as the target\'s default', () => {
    expect(to('gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }, 'messages').thinking).toEqual({ type: 'disabled' });
    expect(to('chat', chat({ reasoning_effort: 'none' }), 'gemini').generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(to('chat', chat({ reasoning_effort: 'none' }), 'responses').reasoning).toEqual({ effort: 'none' });
    // A model that takes no reasoning effort (gpt-4.1) refuses even `none`; Gemini's Pro models refuse a zero budget.
    const off = msgs({ thinking: { type: 'disabled' } });
    expect(to('messages', off, 'chat')).not.toHaveProperty('reasoning_effort');
    expect(to('messages', off, 'responses')).not.toHaveProperty('reasoning');
    expect(to('messages', off, 'gemini').generationConfig ?? {}).not.toHaveProperty('thinkingConfig');
    // Gemini's zero budget (Gemini CLI's side calls) is Gemini's off, not OpenAI's.
    const zero = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } };
    expect(to('gemini', zero, 'chat')).not.toHaveProperty('reasoning_effort');
    expect(to('gemini', zero, 'responses')).not.toHaveProperty('reasoning');
  });

  it('a Gemini budget larger than its output ceiling still leaves Anthropic room to answer', () => {
    const b = to('gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 2000, includeThoughts: true } } }, 'messages');
    expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    expect(b.max_tokens).toBe(3000);
  });

  it('dynamic Gemini thinking is adaptive; a Responses summary asks Gemini for thoughts', () => {
    expect(to('gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }, 'messages').thinking).toEqual({ type: 'adaptive' });
    expect(to('responses', { model: 'g', input: 'hi', reasoning: { effort: 'low', summary: 'detailed' } }, 'gemini').generationConfig.thinkingConfig).toEqual({ thinkingBudget: 2048, includeThoughts: true });
  });

  it('with thinking on, Anthropic gets no sampling knobs it refuses; with a forced call, no thinking', () => {
    const b = to('chat', chat({ reasoning_effort: 'high', temperature: 0.2, top_p: 0.5 }), 'messages');
    expect(b).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    expect([b.temperature, b.top_p]).toEqual([undefined, undefined]);
    expect(to('chat', chat({ reasoning_effort: 'high', top_p: 0.97 }), 'messages').top_p).toBe(0.97);
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const forced = to('chat', chat({ reasoning_effort: 'low', temperature: 0.2, tools, tool_choice: 'required' }), 'messages');
    expect(forced).toMatchObject({ thinking: { type: 'disabled' }, output_config: { effort: 'low' }, temperature: 0.2, tool_choice: { type: 'any' } });
  });

  it('thinking goes in the shape the target Claude model takes: a budget before 4.6, adaptive from 4.7, as asked on 4.6 and on ids we cannot read', () => {
    const encode = (from: WireFormat, body: unknown, target: string): J => FORMATS.messages.encodeRequest(FORMATS[from].decodeRequest(body, 'm'), target);
    const effort = chat({ reasoning_effort: 'high', max_completion_tokens: 1000 });
    const budget = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 8000 } } };
    const adaptive = { type: 'adaptive' };
    const enabled = (n: number) => ({ type: 'enabled', budget_tokens: n });
    // target model: [what an effort of `high` becomes, what a budget of 8,000 becomes]
    const table: Array<[string, [J, J | undefined, number], [J, J | undefined, number]]> = [
      ['claude-3-7-sonnet-20250219', [enabled(24576), undefined, 25576], [enabled(8000), undefined, 9000]],
      ['claude-sonnet-4-20250514', [enabled(24576), undefined, 25576], [enabled(8000), undefined, 9000]],
      ['claude-sonnet-4-5-20250929', [enabled(24576), undefined, 25576], [enabled(8000), undefined, 9000]],
      ['claude-haiku-4-5', [enabled(24576), undefined, 25576], [enabled(8000), undefined, 9000]],
      ['anthropic.claude-opus-4-5-20251101-v1:0', [enabled(24576), undefined, 25576], [enabled(8000), undefined, 9000]],
      ['claude-opus-4-6', [adaptive, { effort: 'high' }, 1000], [enabled(8000), undefined, 9000]],
      ['claude-sonnet-4-6', [adaptive, { effort: 'high' }, 1000], [enabled(8000), undefined, 9000]],
      ['claude-opus-4-7', [adaptive, { effort: 'high' }, 1000], [adaptive, { effort: 'medium' }, 1000]],
      ['claude-sonnet-5', [adaptive, { effort: 'high' }, 1000], [adaptive, { effort: 'medium' }, 1000]],
      ['claude-opus-4-8@20260101', [adaptive, { effort: 'high' }, 1000], [adaptive, { effort: 'medium' }, 1000]],
      ['my-finetune', [adaptive, { effort: 'high' }, 1000], [enabled(8000), undefined, 9000]],
    ];
    for (const [model, fromEffort, fromBudget] of table) {
      for (const [body, from, [thinking, output, maxTokens]] of [[effort, 'chat', fromEffort], [budget, 'gemini', fromBudget]] as const) {
        const b = encode(from, body, model);
        expect([model, from, b.thinking, b.output_config, b.max_tokens]).toEqual([model, from, thinking, output, maxTokens]);
      }
    }
    // A forced tool call turns thinking off; the effort stays only where the model takes one.
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const forced = chat({ reasoning_effort: 'low', tools, tool_choice: 'required' });
    expect(encode('chat', forced, 'claude-sonnet-4-5')).toMatchObject({ thinking: { type: 'disabled' } });
    expect(encode('chat', forced, 'claude-sonnet-4-5')).not.toHaveProperty('output_config');
    expect(encode('chat', forced, 'claude-opus-4-7')).toMatchObject({ thinking: { type: 'disabled' }, output_config: { effort: 'low' } });
  });

  it("a tool round trip whose turn has no thinking Anthropic signed goes without thinking; one that has it keeps it", () => {
    const tools = [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }];
    const call = { id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } };
    const history = [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'c1', content: 'sunny' }];
    const fromChat = to('chat', chat({ reasoning_effort: 'high', tools }, history), 'messages');
    expect(fromChat).toMatchObject({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } });
    // A new user question starts a new turn: thinking is on again.
    expect(to('chat', chat({ reasoning_effort: 'high', tools }, [...history, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'and tomorrow?' }]), 'messages').thinking).toEqual({ type: 'adaptive' });
    const signed = to('responses', { model: 'g', reasoning: { effort: 'high' }, tools: [{ type: 'function', name: 'w', parameters: { type: 'object' } }], input: [
      { role: 'user', content: 'weather?' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look it up.' }], encrypted_content: 'gw1.messages..SIG' },
      { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
    ] }, 'messages');
    expect(signed.thinking).toEqual({ type: 'adaptive' });
    expect(signed.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Look it up.', signature: 'SIG' });
  });

  it('empty text, which Anthropic refuses, does not reach it: an empty tool output is a result without content', () => {
    const b = to('responses', { model: 'g', instructions: '', input: [
      { role: 'user', content: [{ type: 'input_text', text: '' }, { type: 'input_text', text: 'run it' }] },
      { type: 'function_call', call_id: 'c1', name: 'sh', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '' },
    ] }, 'messages');
    expect(b.system).toBeUndefined();
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'run it' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'sh', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1' }] },
    ]);
  });

  it('a format without an output ceiling gets the default one on messages', () => {
    expect(to('responses', { model: 'g', input: 'hi' }, 'messages').max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(to('chat', chat({ max_tokens: 77 }), 'messages').max_tokens).toBe(77);
  });
});

describe('tools', () => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  it('a named tool choice', () => {
    const body = chat({ tools, tool_choice: { type: 'function', function: { name: 'f' } } });
    expect(to('chat', body, 'messages').tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(to('chat', body, 'responses').tool_choice).toEqual({ type: 'function', name: 'f' });
    expect(to('chat', body, 'gemini').toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
    expect(to('gemini', { contents: [], tools: [{ functionDeclarations: [{ name: 'f' }, { name: 'g' }] }], toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } } }, 'chat').tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
  });

  it('one call at a time', () => {
    const body = chat({ tools, parallel_tool_calls: false });
    expect(to('chat', body, 'messages').tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(to('chat', body, 'responses').parallel_tool_calls).toBe(false);
    expect(to('messages', msgs({ tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'any', disable_parallel_tool_use: true } }), 'chat')).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
  });

  it('images a tool returned reach a chat model in a user message after the tool messages', () => {
    const body = msgs({}, [
      { role: 'user', content: 'shot' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'screenshot', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'here' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }] },
    ]);
    const m = to('messages', body, 'chat').messages;
    expect(m.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'here' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
    ]);
  });

  it('media in a Gemini function response (Gemini 3 multimodal results) stay in the tool result', () => {
    const body = { contents: [
      { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read_file', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'here' }, parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }] } }] },
    ] };
    expect(to('gemini', body, 'messages').messages[1].content).toEqual([{ type: 'tool_result', tool_use_id: 'c1', content: [
      { type: 'text', text: 'here' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ] }]);
    expect(to('gemini', body, 'chat').messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] });
  });

  it("a Gemini SDK chat's history of a streamed Anthropic answer goes back as the thinking block Anthropic signed, without empty text", () => {
    const enc = FORMATS.gemini.streamEncoder();
    const chunks = [
      { type: 'start', id: 'msg_1', model: 'c' },
      { type: 'block_start', index: 0, block: { type: 'thinking' } },
      { type: 'thinking_delta', index: 0, text: 'Let me ' },
      { type: 'thinking_delta', index: 0, text: 'look.' },
      { type: 'signature', index: 0, signature: { format: 'messages', value: 'SIG' } },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { type: 'tool_call', id: 'toolu_1', name: 'f' } },
      { type: 'arguments_delta', index: 1, json: '{"a":1}' },
      { type: 'block_stop', index: 1 },
      { type: 'finish', stopReason: 'tool_use', usage: { input: 1, cache_read: 0, cache_write: 0, output: 1 } },
    ].flatMap((e) => enc.push(e as TextStreamEvent)).map((f) => JSON.parse(f.data));
    // The SDK's Chat keeps each chunk's content as its own history entry.
    const body = { contents: [
      { role: 'user', parts: [{ text: 'go' }] },
      ...chunks.map((c: J) => c.candidates[0].content),
      { role: 'user', parts: [{ functionResponse: { id: 'toolu_1', name: 'f', response: { output: 'ok' } } }] },
    ], generationConfig: { thinkingConfig: { thinkingBudget: 2048 } } };
    const b = to('gemini', body, 'messages');
    expect(b.messages[1].content).toEqual([{ type: 'thinking', thinking: 'Let me look.', signature: 'SIG' }, { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }]);
    expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('Gemini calls without ids get ones their responses find again', () => {
    const n = FORMATS.gemini.decodeRequest({ contents: [
      { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'f', args: { x: 1 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'a' } } }, { functionResponse: { name: 'f', response: { output: 'b' } } }] },
    ] });
    const calls = n.messages[0].content.map((p: J) => p.id);
    expect(n.messages[1].content.map((p: J) => p.callId)).toEqual(calls);
    expect(new Set(calls).size).toBe(2);
  });

  it('ids made for Gemini calls fit what OpenAI (40 characters) and Anthropic (letters, digits, _ and -) take', () => {
    const name = 'mcp.knowledge_base:search_documents_by_semantic_similarity';
    const n = FORMATS.gemini.decodeRequest({ contents: [
      { role: 'model', parts: [{ functionCall: { name, args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name, response: { output: 'a' } } }] },
    ] });
    const id = (n.messages[0].content[0] as J).id;
    expect(id.length).toBeLessThanOrEqual(40);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((n.messages[1].content[0] as J).callId).toBe(id);
  });

  it('calls another vendor made reach Gemini 3 with the documented signature sentinel, Gemini 2.5 without', () => {
    const body = chat({}, [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'tool', tool_call_id: 'b', content: '2' },
    ]);
    const n = FORMATS.chat.decodeRequest(body);
    const three = FORMATS.gemini.encodeRequest(n, 'gemini-3-flash-preview') as J;
    expect(three.contents[1].parts.map((p: J) => p.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
    const older = FORMATS.gemini.encodeRequest(n, 'gemini-2.5-flash') as J;
    expect(older.contents[1].parts.some((p: J) => p.thoughtSignature)).toBe(false);
    // A call Gemini itself signed keeps its own signature.
    const own = FORMATS.gemini.decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'x' }] }, { role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'real' }] }] });
    expect((FORMATS.gemini.encodeRequest(own, 'gemini-3-pro') as J).contents[1].parts[0].thoughtSignature).toBe('real');
  });

  it('Gemini Schema types read as JSON Schema', () => {
    const b = to('gemini', { contents: [], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { type: 'ARRAY', items: { type: 'STRING' } } } } }] }] }, 'chat');
    expect(b.tools[0].function.parameters).toEqual({ type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } });
  });
});

describe('carried as they are', () => {
  it('tool results lead their turn on messages, whatever order the client wrote', () => {
    const body = { model: 'g', input: [
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { role: 'user', content: 'also this' },
      { type: 'function_call_output', call_id: 'c1', output: 'r' },
    ] };
    expect(to('responses', body, 'messages').messages[1].content.map((c: J) => c.type)).toEqual(['tool_result', 'text']);
  });

  it('cache markers and redacted thinking survive a messages round trip', () => {
    const body = msgs({}, [
      { role: 'user', content: [{ type: 'text', text: 'long', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'opaque' }, { type: 'text', text: 'ok' }] },
      { role: 'user', content: 'more' },
    ]);
    const out = to('messages', body, 'messages');
    expect(out.messages[0].content[0]).toEqual({ type: 'text', text: 'long', cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect(out.messages[1].content[0]).toEqual({ type: 'redacted_thinking', data: 'opaque' });
    expect(JSON.stringify(to('messages', body, 'chat'))).not.toContain('opaque');
  });

  it('responses store and previous_response_id are carried, not resolved', () => {
    const n = FORMATS.responses.decodeRequest({ model: 'g', input: 'hi', store: true, previous_response_id: 'resp_9' });
    expect([n.store, n.previousResponseId]).toEqual([true, 'resp_9']);
    expect(FORMATS.responses.encodeRequest(n, 't')).toMatchObject({ store: true, previous_response_id: 'resp_9' });
    expect(to('chat', chat({}), 'responses').store).toBe(false);
  });

  it('a Response shows its request settings back, streamed or not', () => {
    const req = FORMATS.responses.decodeRequest({ model: 'g', instructions: 'Be brief.', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }], reasoning: { effort: 'low' }, max_output_tokens: 9 });
    const echo = { instructions: 'Be brief.', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }], reasoning: { effort: 'low' }, max_output_tokens: 9, store: true };
    expect(FORMATS.responses.encodeAnswer(answer('end_turn'), req)).toMatchObject({ ...echo, status: 'completed' });
    const enc = FORMATS.responses.streamEncoder(req);
    const created = JSON.parse(enc.push({ type: 'start', id: 'resp_1', model: 'g' })[0].data);
    expect(created.response).toMatchObject({ ...echo, status: 'in_progress' });
  });

  it('a stop sequence reaches the formats that have one', () => {
    expect(to('chat', chat({ stop: 'END' }), 'messages').stop_sequences).toEqual(['END']);
    expect(to('messages', msgs({ stop_sequences: ['END'] }), 'gemini').generationConfig.stopSequences).toEqual(['END']);
    expect(to('gemini', { contents: [], generationConfig: { stopSequences: ['END'] } }, 'chat').stop).toEqual(['END']);
  });

  it('Gemini takes the model and the stream flag in its URL', () => {
    expect(geminiPath('gemini-2.5-flash', true)).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(geminiPath('gemini-2.5-flash', false)).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(FORMATS.gemini.decodeRequest({ contents: [] }, 'gemini-2.5-flash').model).toBe('gemini-2.5-flash');
  });

  it("Gemini's OpenAPI responseSchema reaches the others as JSON Schema", () => {
    const b = to('gemini', { contents: [], generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER' } } } } }, 'chat');
    expect(b.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object', properties: { n: { type: 'integer' } } } } });
  });

  it('JSON mode without a schema reaches chat, responses and Gemini', () => {
    const body = chat({ response_format: { type: 'json_object' } });
    expect(to('chat', body, 'responses').text).toEqual({ format: { type: 'json_object' } });
    expect(to('chat', body, 'gemini').generationConfig).toEqual({ responseMimeType: 'application/json' });
  });
});
