import { randomBytes } from 'node:crypto';
import type { Decision } from './agent-upstream.ts';

// The scripted answers of test/support/agent-upstream.ts in each vendor's wire format, JSON or
// server-sent events, with the full event sequences the agents' parsers expect.

export interface Reply { kind: 'text' | 'tool' | 'other'; status: number; contentType: string; body: string }

const id = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;
const kindOf = (d: Decision) => ('tool' in d ? 'tool' : 'text') as 'tool' | 'text';

/** Each agent's shell tool takes the command in its own argument shape. */
export function toolArguments(tool: string, command: string): Record<string, unknown> {
  if (tool === 'shell') return { command: ['bash', '-lc', command] };
  if (tool === 'exec_command') return { cmd: command };
  return { command }; // Bash, shell_command, run_shell_command
}

function sse(events: Array<[string | undefined, unknown]>): string {
  return events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`).join('');
}

export function anthropicReply(d: Decision, stream: boolean, model = 'claude-test'): Reply {
  const block = 'tool' in d
    ? { type: 'tool_use', id: id('toolu_'), name: d.tool, input: toolArguments(d.tool, d.command) }
    : { type: 'text', text: d.text };
  const stop = 'tool' in d ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 20, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id: id('msg_'), type: 'message', role: 'assistant', model, content: [block], stop_reason: stop, stop_sequence: null, usage };
  if (!stream) return { kind: kindOf(d), status: 200, contentType: 'application/json', body: JSON.stringify(message) };
  const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
  const delta = block.type === 'text'
    ? { type: 'text_delta', text: (block as any).text }
    : { type: 'input_json_delta', partial_json: JSON.stringify((block as any).input) };
  return {
    kind: kindOf(d), status: 200, contentType: 'text/event-stream',
    body: sse([
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
      ['ping', { type: 'ping' }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  };
}

export function responsesReply(d: Decision, stream: boolean, model = 'gpt-test'): Reply {
  const item: Record<string, unknown> = 'tool' in d
    ? { id: id('fc_'), type: 'function_call', status: 'completed', call_id: id('call_'), name: d.tool, arguments: JSON.stringify(toolArguments(d.tool, d.command)) }
    : { id: id('msg_'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: d.text, annotations: [] }] };
  const usage = { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 };
  const base = { id: id('resp_'), object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] as unknown[], usage: null as unknown };
  const done = { ...base, status: 'completed', output: [item], usage };
  if (!stream) return { kind: kindOf(d), status: 200, contentType: 'application/json', body: JSON.stringify(done) };
  const events: Array<[string, Record<string, unknown>]> = [
    ['response.created', { response: base }],
    ['response.in_progress', { response: base }],
  ];
  if (item.type === 'message') {
    const ref = { item_id: item.id, output_index: 0, content_index: 0 };
    events.push(
      ['response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }],
      ['response.content_part.added', { ...ref, part: { type: 'output_text', text: '', annotations: [] } }],
      ['response.output_text.delta', { ...ref, delta: (d as { text: string }).text }],
      ['response.output_text.done', { ...ref, text: (d as { text: string }).text }],
      ['response.content_part.done', { ...ref, part: (item.content as unknown[])[0] }],
    );
  } else {
    events.push(
      ['response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } }],
      ['response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments }],
      ['response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments }],
    );
  }
  events.push(['response.output_item.done', { output_index: 0, item }], ['response.completed', { response: done }]);
  const body = sse(events.map(([type, data], sequence_number) => [type, { type, sequence_number, ...data }]));
  return { kind: kindOf(d), status: 200, contentType: 'text/event-stream', body };
}

export function geminiReply(d: Decision, stream: boolean, model: string): Reply {
  const part = 'tool' in d
    ? { functionCall: { name: d.tool, args: toolArguments(d.tool, d.command) } }
    : { text: d.text };
  const chunk = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 },
    modelVersion: model,
    responseId: id(''),
  };
  if (!stream) return { kind: kindOf(d), status: 200, contentType: 'application/json', body: JSON.stringify(chunk) };
  return { kind: kindOf(d), status: 200, contentType: 'text/event-stream', body: sse([[undefined, chunk]]) };
}
