// One recorded stream per wire format, written from the SDKs' event types: thinking, text, and two
// parallel tool calls whose arguments arrive in pieces, then the stop and usage of the fixture answers.
type J = Record<string, unknown>;

export const messagesStream: J[] = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 5, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Need ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'both.' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-anthropic' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'ping' },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Bon' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'jour' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"ci' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ty":"Lyon"}' } },
  { type: 'content_block_stop', index: 2 },
  { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"tz":' } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '"UTC"}' } },
  { type: 'content_block_stop', index: 3 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 50, input_tokens: null, cache_read_input_tokens: null, cache_creation_input_tokens: null, output_tokens_details: { thinking_tokens: 10 } } },
  { type: 'message_stop' },
];

const chunk = (delta: J, finish: string | null = null): J => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-x', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
export const chatStream: Array<J | '[DONE]'> = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Bon' }),
  chunk({ content: 'jour' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Lyon"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '"UTC"}' } }] }),
  chunk({}, 'tool_calls'),
  { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-x', choices: [], usage: { prompt_tokens: 125, completion_tokens: 50, total_tokens: 175, prompt_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 10 } } },
  '[DONE]',
];

const resp = (status: string, output: J[], usage: J | null): J => ({
  id: 'resp_1', object: 'response', created_at: 1700000000, status, error: null, incomplete_details: null, instructions: null, model: 'gpt-x',
  output, parallel_tool_calls: true, temperature: null, tool_choice: 'auto', tools: [], top_p: null, usage,
});
const reasoning = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need both.' }], encrypted_content: 'enc-openai' };
const message = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Bonjour', annotations: [], logprobs: [] }] };
const fc1 = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Lyon"}' };
const fc2 = { id: 'fc_2', type: 'function_call', status: 'completed', call_id: 'call_b', name: 'get_time', arguments: '{"tz":"UTC"}' };
const responsesEvents: J[] = [
  { type: 'response.created', response: resp('in_progress', [], null) },
  { type: 'response.in_progress', response: resp('in_progress', [], null) },
  { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
  { type: 'response.reasoning_summary_part.added', item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Need ' },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'both.' },
  { type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: 0, text: 'Need both.' },
  { type: 'response.reasoning_summary_part.done', item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: 'Need both.' } },
  { type: 'response.output_item.done', output_index: 0, item: reasoning },
  { type: 'response.output_item.added', output_index: 1, item: { ...message, status: 'in_progress', content: [] } },
  { type: 'response.content_part.added', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
  { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Bon', logprobs: [] },
  { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'jour', logprobs: [] },
  { type: 'response.output_text.done', item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Bonjour', logprobs: [] },
  { type: 'response.content_part.done', item_id: 'msg_1', output_index: 1, content_index: 0, part: message.content[0] },
  { type: 'response.output_item.done', output_index: 1, item: message },
  { type: 'response.output_item.added', output_index: 2, item: { ...fc1, status: 'in_progress', arguments: '' } },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{"ci' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: 'ty":"Lyon"}' },
  { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 2, name: 'get_weather', arguments: '{"city":"Lyon"}' },
  { type: 'response.output_item.done', output_index: 2, item: fc1 },
  { type: 'response.output_item.added', output_index: 3, item: { ...fc2, status: 'in_progress', arguments: '' } },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_2', output_index: 3, delta: '{"tz":' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_2', output_index: 3, delta: '"UTC"}' },
  { type: 'response.function_call_arguments.done', item_id: 'fc_2', output_index: 3, name: 'get_time', arguments: '{"tz":"UTC"}' },
  { type: 'response.output_item.done', output_index: 3, item: fc2 },
  { type: 'response.completed', response: resp('completed', [reasoning, message, fc1, fc2], {
    input_tokens: 125, input_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 175,
  }) },
];
export const responsesStream: J[] = responsesEvents.map((e, i) => ({ ...e, sequence_number: i }));

const g = (parts: J[], extra: J = {}): J => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: 'gemini-x', responseId: 'gem_1' });
export const geminiStream: J[] = [
  g([{ text: 'Need ', thought: true }]),
  g([{ text: 'both.', thought: true, thoughtSignature: 'sig-google-thought' }]),
  g([{ text: 'Bon' }]),
  g([{ text: 'jour' }]),
  g([{ functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Lyon' } }, thoughtSignature: 'sig-google' }, { functionCall: { id: 'call_b', name: 'get_time', args: { tz: 'UTC' } } }]),
  { ...g([{ text: '' }], { finishReason: 'STOP' }), usageMetadata: { promptTokenCount: 120, cachedContentTokenCount: 20, candidatesTokenCount: 40, thoughtsTokenCount: 10, totalTokenCount: 170 } },
];

export const STREAMS = { messages: messagesStream, chat: chatStream, responses: responsesStream, gemini: geminiStream } as const;
