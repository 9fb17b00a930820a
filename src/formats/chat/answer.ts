// A chat completion (OpenAI) to and from the neutral answer, with finish reasons and usage.
import type { UsageClasses } from '../../core/usage.ts';
import { arr, isObject, obj, str, textOf, type AnswerPart, type Json, type StopReason, type TextAnswer } from '../../core/text/index.ts';

const FINISH_IN: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/**
 * OpenAI reports `stop`, not `tool_calls`, when `tool_choice` forced the call (and some compatible
 * upstreams always do): an answer that ends with calls ended to have them run.
 */
export const stopReasonIn = (s: unknown, hasCall = false): StopReason => {
  const reason = FINISH_IN[String(s)] ?? 'end_turn';
  return reason === 'end_turn' && hasCall ? 'tool_use' : reason;
};

/** Chat has no finish reason of its own for a stop sequence: it reports `stop`, as for a natural end. */
export const stopReasonOut = (s: StopReason): string =>
  s === 'max_tokens' ? 'length' : s === 'tool_use' ? 'tool_calls' : s === 'refusal' ? 'content_filter' : 'stop';

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** `prompt_tokens` counts every prompt token; the cached and cache-written parts are split out of it. */
export const usageIn = (u: unknown): UsageClasses => {
  const o = isObject(u) ? u : {};
  const pd = isObject(o.prompt_tokens_details) ? o.prompt_tokens_details : {};
  const cd = isObject(o.completion_tokens_details) ? o.completion_tokens_details : {};
  const cacheRead = n(pd.cached_tokens);
  const cacheWrite = n(pd.cache_write_tokens);
  return {
    input: Math.max(0, n(o.prompt_tokens) - cacheRead - cacheWrite),
    cache_read: cacheRead,
    cache_write: cacheWrite,
    output: n(o.completion_tokens),
    ...(typeof cd.reasoning_tokens === 'number' ? { reasoning: cd.reasoning_tokens } : {}),
  };
};

export const usageOut = (u: UsageClasses): Json => {
  const prompt = u.input + u.cache_read + u.cache_write;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cache_read, ...(u.cache_write ? { cache_write_tokens: u.cache_write } : {}) },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
  };
};

export const decodeAnswer = (input: unknown): TextAnswer => {
  const body = obj(input, 'body');
  const choice = obj(arr(body.choices, 'choices')[0], 'choices[0]');
  const msg = obj(choice.message, 'choices[0].message');
  const content: AnswerPart[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning) content.push({ type: 'thinking', text: reasoning });
  if (typeof msg.content === 'string' && msg.content) content.push({ type: 'text', text: msg.content });
  if (typeof msg.refusal === 'string' && msg.refusal) content.push({ type: 'text', text: msg.refusal });
  if (Array.isArray(msg.tool_calls))
    msg.tool_calls.forEach((c, i) => {
      const call = obj(c, `choices[0].message.tool_calls[${i}]`);
      if (call.type !== 'function') return;
      const fn = obj(call.function, `choices[0].message.tool_calls[${i}].function`);
      content.push({ type: 'tool_call', id: str(call.id, 'id'), name: str(fn.name, 'name'), arguments: String(fn.arguments ?? '') });
    });
  const refused = typeof msg.refusal === 'string' && msg.refusal !== '';
  return {
    id: str(body.id, 'id'),
    model: str(body.model, 'model'),
    content,
    stopReason: refused ? 'refusal' : stopReasonIn(choice.finish_reason, content.some((p) => p.type === 'tool_call')),
    usage: usageIn(body.usage),
    ...(typeof body.created === 'number' ? { created: body.created } : {}),
  };
};

export const encodeAnswer = (a: TextAnswer): Json => {
  const calls = a.content.flatMap((p) => (p.type === 'tool_call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments || '{}' } }] : []));
  const text = textOf(a.content);
  return {
    id: a.id,
    object: 'chat.completion',
    created: a.created ?? Math.floor(Date.now() / 1000),
    model: a.model,
    choices: [{
      index: 0,
      message: { role: 'assistant', content: text === '' && calls.length ? null : text, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) },
      logprobs: null,
      finish_reason: stopReasonOut(a.stopReason),
    }],
    usage: usageOut(a.usage),
  };
};
