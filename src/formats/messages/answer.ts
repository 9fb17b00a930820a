// A messages API answer (Anthropic `Message`) to and from the neutral answer, with its stop reasons and usage.
import type { UsageClasses } from '../../core/usage.ts';
import {
  argumentsObject, arr, isObject, obj, str, unwrapOpaque, wrapOpaque,
  type AnswerPart, type Json, type StopReason, type TextAnswer,
} from '../../core/text/index.ts';

const STOP_IN: Record<string, StopReason> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  refusal: 'refusal',
  // A paused server-tool turn is a finished answer for a client without server tools.
  pause_turn: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
};

export const stopReasonIn = (s: unknown): StopReason => STOP_IN[String(s)] ?? 'end_turn';
export const stopReasonOut = (s: StopReason): string => s;

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const usageIn = (u: unknown): UsageClasses => {
  const o = isObject(u) ? u : {};
  const details = isObject(o.output_tokens_details) ? o.output_tokens_details : undefined;
  return {
    input: n(o.input_tokens),
    cache_read: n(o.cache_read_input_tokens),
    cache_write: n(o.cache_creation_input_tokens),
    output: n(o.output_tokens),
    ...(details && typeof details.thinking_tokens === 'number' ? { reasoning: details.thinking_tokens } : {}),
  };
};

export const usageOut = (u: UsageClasses): Json => ({
  input_tokens: u.input,
  cache_creation_input_tokens: u.cache_write,
  cache_read_input_tokens: u.cache_read,
  output_tokens: u.output,
  ...(u.reasoning !== undefined ? { output_tokens_details: { thinking_tokens: u.reasoning } } : {}),
});

export const answerBlockIn = (v: unknown, field: string): AnswerPart | undefined => {
  const b = obj(v, field);
  if (b.type === 'text') return { type: 'text', text: str(b.text, `${field}.text`) };
  if (b.type === 'thinking') return { type: 'thinking', text: str(b.thinking, `${field}.thinking`), signature: unwrapOpaque(String(b.signature ?? ''), 'messages') };
  if (b.type === 'redacted_thinking') return { type: 'thinking', text: '', redacted: true, signature: unwrapOpaque(str(b.data, `${field}.data`), 'messages') };
  if (b.type === 'tool_use') return { type: 'tool_call', id: str(b.id, `${field}.id`), name: str(b.name, `${field}.name`), arguments: JSON.stringify(b.input ?? {}) };
  // Server tool blocks are the vendor's own work; a client of another format has nothing to do with them.
  return undefined;
};

export const decodeAnswer = (input: unknown): TextAnswer => {
  const body = obj(input, 'body');
  const content = arr(body.content, 'content').flatMap((b, i) => answerBlockIn(b, `content[${i}]`) ?? []);
  return {
    id: str(body.id, 'id'),
    model: str(body.model, 'model'),
    content,
    stopReason: stopReasonIn(body.stop_reason),
    ...(typeof body.stop_sequence === 'string' ? { stopSequence: body.stop_sequence } : {}),
    usage: usageIn(body.usage),
  };
};

export const answerBlockOut = (p: AnswerPart): Json => {
  // No `citations` key: the vendor sends one only when there are citations, and clients that
  // validate answers (the AI SDK's anthropic provider) take an array or nothing, never null.
  if (p.type === 'text') return { type: 'text', text: p.text };
  if (p.type === 'tool_call') return { type: 'tool_use', id: p.id, name: p.name, input: argumentsObject(p.arguments) };
  if (p.redacted && p.signature) return { type: 'redacted_thinking', data: wrapOpaque(p.signature, 'messages') };
  return { type: 'thinking', thinking: p.text, signature: p.signature ? wrapOpaque(p.signature, 'messages') : '' };
};

export const encodeAnswer = (a: TextAnswer): Json => ({
  id: a.id,
  type: 'message',
  role: 'assistant',
  model: a.model,
  content: a.content.map(answerBlockOut),
  stop_reason: stopReasonOut(a.stopReason),
  stop_sequence: a.stopSequence ?? null,
  stop_details: null,
  container: null,
  usage: usageOut(a.usage),
});
