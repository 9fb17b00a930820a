import { newId } from '../../lib/ids.ts';
import type { FinishReason, TextPart, TextRequest, TextUsage } from '../text/text.types.ts';
import type { MessagesRequest } from './messages.schemas.ts';

// The messages format <-> the neutral text request, its response and its stream events.

export function fromMessages(body: MessagesRequest): TextRequest {
  const system = typeof body.system === 'string' ? body.system : body.system?.map((b) => b.text).join('\n');
  return {
    model: body.model,
    system: system || undefined,
    messages: body.messages.map((m) => ({
      role: m.role,
      parts:
        typeof m.content === 'string'
          ? [{ type: 'text', text: m.content }]
          : m.content.map((block): TextPart => (block.type === 'text' ? { type: 'text', text: block.text } : { type: 'image', mediaType: block.source.media_type, data: block.source.data })),
    })),
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stopSequences: body.stop_sequences,
  };
}

const STOP_REASON: Record<FinishReason, string> = { stop: 'end_turn', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', tool_calls: 'tool_use' };

export const messageId = () => newId('msg');

/** The messages format's usage: input_tokens is the uncached prompt, the cache classes beside it. */
export const messagesUsage = (usage: TextUsage) => ({
  input_tokens: usage.input,
  cache_creation_input_tokens: usage.cache_write,
  cache_read_input_tokens: usage.cache_read,
  output_tokens: usage.output,
});

export function messageResponse(id: string, model: string, text: string, finish: FinishReason, stopSequence: string | null, usage: TextUsage) {
  return {
    id,
    type: 'message' as const,
    role: 'assistant' as const,
    content: [{ type: 'text' as const, text }],
    model,
    stop_reason: STOP_REASON[finish],
    stop_sequence: stopSequence,
    usage: messagesUsage(usage),
  };
}

/** The standard event sequence of a streamed message, as [event name, data] pairs. */
export const streamEvents = {
  start: (id: string, model: string, inputTokens: number) =>
    [
      ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 0 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['ping', { type: 'ping' }],
    ] as const,
  delta: (text: string) => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }] as const,
  end: (finish: FinishReason, stopSequence: string | null, usage: TextUsage) =>
    [
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: STOP_REASON[finish], stop_sequence: stopSequence }, usage: messagesUsage(usage) }],
      ['message_stop', { type: 'message_stop' }],
    ] as const,
};
