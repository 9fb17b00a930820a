// A Gemini GenerateContentResponse to and from the neutral answer: parts, finish reasons, usage metadata.
import { randomBytes } from 'node:crypto';
import type { UsageClasses } from '../../core/usage.ts';
import {
  argumentsComplete, argumentsObject, isObject, obj, unwrapOpaque, wrapOpaque,
  type AnswerPart, type Json, type StopReason, type TextAnswer,
} from '../../core/text/index.ts';

const REFUSED = ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION'];

export const stopReasonIn = (finish: unknown, hasCall: boolean): StopReason => {
  if (finish === 'MAX_TOKENS') return 'max_tokens';
  if (REFUSED.includes(String(finish))) return 'refusal';
  return hasCall ? 'tool_use' : 'end_turn';
};

export const stopReasonOut = (s: StopReason): string => (s === 'max_tokens' ? 'MAX_TOKENS' : s === 'refusal' ? 'SAFETY' : 'STOP');

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * `promptTokenCount` includes the cached part; tool-use prompt tokens are input too; thoughts are output
 * though Gemini counts them apart from the candidates.
 */
export const usageIn = (u: unknown): UsageClasses => {
  const o = isObject(u) ? u : {};
  const cached = n(o.cachedContentTokenCount);
  const thoughts = n(o.thoughtsTokenCount);
  return {
    input: Math.max(0, n(o.promptTokenCount) - cached) + n(o.toolUsePromptTokenCount),
    cache_read: cached,
    cache_write: 0,
    output: n(o.candidatesTokenCount) + thoughts,
    ...(o.thoughtsTokenCount !== undefined ? { reasoning: thoughts } : {}),
  };
};

export const usageOut = (u: UsageClasses): Json => {
  const prompt = u.input + u.cache_read + u.cache_write;
  const thoughts = u.reasoning ?? 0;
  return {
    promptTokenCount: prompt,
    ...(u.cache_read ? { cachedContentTokenCount: u.cache_read } : {}),
    candidatesTokenCount: u.output - thoughts,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: prompt + u.output,
  };
};

/** An id for a call Gemini left unnamed, stable for one answer. */
export const callId = (answerId: string, i: number): string => `call_${answerId || randomBytes(6).toString('hex')}_${i}`;

export const partIn = (v: unknown, answerId: string, i: number): AnswerPart | undefined => {
  if (!isObject(v)) return undefined;
  const sig = typeof v.thoughtSignature === 'string' ? { signature: unwrapOpaque(v.thoughtSignature, 'gemini') } : {};
  if (typeof v.text === 'string') return v.thought === true ? { type: 'thinking', text: v.text, ...sig } : { type: 'text', text: v.text, ...sig };
  if (isObject(v.functionCall)) {
    const fc = v.functionCall;
    return { type: 'tool_call', id: typeof fc.id === 'string' && fc.id ? fc.id : callId(answerId, i), name: String(fc.name ?? ''), arguments: JSON.stringify(fc.args ?? {}), ...sig };
  }
  return undefined;
};

export const decodeAnswer = (input: unknown): TextAnswer => {
  const body = obj(input, 'body');
  const cand = Array.isArray(body.candidates) && isObject(body.candidates[0]) ? body.candidates[0] : {};
  const id = typeof body.responseId === 'string' ? body.responseId : '';
  const raw = isObject(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
  const content = raw.flatMap((p, i) => partIn(p, id, i) ?? []);
  const blocked = isObject(body.promptFeedback) && body.promptFeedback.blockReason !== undefined;
  return {
    id,
    model: typeof body.modelVersion === 'string' ? body.modelVersion : '',
    content,
    stopReason: blocked ? 'refusal' : stopReasonIn(cand.finishReason, content.some((p) => p.type === 'tool_call')),
    usage: usageIn(body.usageMetadata),
  };
};

export const partOut = (p: AnswerPart): Json => {
  const sig = p.signature ? { thoughtSignature: wrapOpaque(p.signature, 'gemini') } : {};
  if (p.type === 'text') return { text: p.text, ...sig };
  if (p.type === 'thinking') return { text: p.text, thought: true, ...sig };
  return { functionCall: { id: p.id, name: p.name, args: argumentsObject(p.arguments) }, ...sig };
};

/** A call whose arguments the max-tokens stop cut off: Gemini never answers half a call. */
const cutOff = (p: AnswerPart, stop: StopReason): boolean => stop === 'max_tokens' && p.type === 'tool_call' && !argumentsComplete(p.arguments);

export const encodeAnswer = (a: TextAnswer): Json => ({
  candidates: [{ content: { role: 'model', parts: a.content.filter((p) => !(p.type === 'thinking' && p.redacted) && !cutOff(p, a.stopReason)).map(partOut) }, finishReason: stopReasonOut(a.stopReason), index: 0 }],
  usageMetadata: usageOut(a.usage),
  modelVersion: a.model,
  responseId: a.id,
});
