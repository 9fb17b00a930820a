import { createHash } from 'node:crypto';
import { decode, encode } from 'gpt-tokenizer';
import type { AnswerPart, ContentPart, TextAnswer, TextRequest as NeutralRequest } from '../../core/text/index.ts';
import { promptTokens } from '../../lib/tokens/tokens.ts';
import type { FinishReason, TextChunk, TextRequest, TextResult } from '../../core/text/provider.ts';
import { answerResult } from '../wire-text.ts';
import { callerChunks, encodeForCaller } from '../../formats/caller.ts';
import { simulatedReply } from './reply.ts';
import { instanceOf } from './schema-instance.ts';

// The simulator on the four wire surfaces: the reply of text.ts, or a tool call when the last user
// turn says `[sim:tool=NAME]` or `[sim:tool=NAME {"json":"args"}]` and the request offers NAME.
// A turn that brings tool results back is answered with a text that quotes them, so a client's
// whole tool round trip runs without an upstream.

const TOOL = /\[sim:tool=([\w.-]{1,64})(?:\s+(\{.*?\}))?\]/s;
const CHUNK_TOKENS = 4;
const STOP: Record<FinishReason, TextAnswer['stopReason']> = { stop: 'end_turn', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', tool_calls: 'tool_use' };

const textOf = (parts: readonly ContentPart[]): string =>
  parts.map((p) => (p.type === 'text' ? p.text : p.type === 'tool_result' ? textOf(p.content) : '')).join(' ');

/** What the simulated model answers, and how many tokens that is. */
function reply(view: TextRequest): { content: AnswerPart[]; finish: FinishReason; stopSequence: string | null; output: number } {
  const neutral: NeutralRequest = view.wire!.request;
  const last = [...neutral.messages].reverse().find((m) => m.role === 'user');
  const results = (last?.content ?? []).filter((p) => p.type === 'tool_result');
  if (results.length > 0) {
    const text = results.map((r) => `Tool ${r.name ?? r.callId} returned: ${textOf(r.content).trim()}`).join('\n');
    return { content: [{ type: 'text', text }], finish: 'stop', stopSequence: null, output: encode(text, { disallowedSpecial: new Set() }).length };
  }
  const called = toolToCall(neutral, textOf(last?.content ?? []));
  if (called) {
    const id = `call_${createHash('sha256').update(`${called.name}${called.args}${neutral.messages.length}`).digest('hex').slice(0, 24)}`;
    return { content: [{ type: 'tool_call', id, name: called.name, arguments: called.args, ...(called.custom ? { custom: true } : {}) }], finish: 'tool_calls', stopSequence: null, output: encode(called.args).length };
  }
  if (neutral.output) {
    // Structured output: a value the schema accepts (a JSON object answer for json_object).
    const text = JSON.stringify(neutral.output.type === 'json_schema' ? instanceOf(neutral.output.schema) : { answer: simulatedReply(view).text });
    return { content: [{ type: 'text', text }], finish: 'stop', stopSequence: null, output: encode(text).length };
  }
  const { text, finish, stopSequence, outputTokens } = simulatedReply(view);
  return { content: [{ type: 'text', text }], finish, stopSequence, output: outputTokens };
}

/**
 * The tool the simulated model calls: the one the caller forces (tool_choice naming it, or the
 * first on `required`), with arguments its schema accepts unless the prompt gives them; else the
 * one the prompt's `[sim:tool=NAME {args}]` asks for, if offered.
 */
function toolToCall(request: NeutralRequest, prompt: string): { name: string; args: string; custom?: boolean } | undefined {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (!tools.length || choice?.type === 'none') return undefined;
  const asked = TOOL.exec(prompt);
  const named = asked ? tools.find((t) => t.name === asked[1]) : undefined;
  const forced = choice?.type === 'tool' ? tools.find((t) => t.name === choice.name) : choice?.type === 'required' ? (named ?? tools[0]) : undefined;
  const tool = forced ?? named;
  if (!tool) return undefined;
  const given = tool === named && asked?.[2] && isJsonObject(asked[2]) ? asked[2] : undefined;
  return { name: tool.name, args: given ?? JSON.stringify(instanceOf(tool.parameters)), ...(tool.custom ? { custom: true } : {}) };
}

function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

function answerOf(view: TextRequest): TextAnswer {
  const { content, finish, stopSequence, output } = reply(view);
  const id = `sim_${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 24)}`;
  return { id, model: view.wire!.model, content, stopReason: STOP[finish], ...(stopSequence ? { stopSequence } : {}), usage: { input: promptTokens(view), cache_read: 0, cache_write: 0, output }, created: Math.floor(Date.now() / 1000) };
}

export function simulatedWireAnswer(view: TextRequest): TextResult {
  const answer = answerOf(view);
  return answerResult(answer, encodeForCaller(view.wire!, answer));
}

/** The answer as the caller's format streams it, a few tokens per event. */
export async function* simulatedWireStream(view: TextRequest, aborted: () => boolean): AsyncIterable<TextChunk> {
  const answer = answerOf(view);
  const out = callerChunks(view.wire!);
  yield out([{ type: 'start', id: answer.id, model: answer.model, created: answer.created }]);
  for (const [index, part] of answer.content.entries()) {
    if (part.type === 'tool_call') {
      yield out([{ type: 'block_start', index, block: { type: 'tool_call', id: part.id, name: part.name, ...(part.custom ? { custom: true } : {}) } }, { type: 'arguments_delta', index, json: part.arguments }, { type: 'block_stop', index }], part.arguments);
      continue;
    }
    if (part.type !== 'text') continue;
    yield out([{ type: 'block_start', index, block: { type: 'text' } }]);
    const tokens = encode(part.text, { disallowedSpecial: new Set() });
    for (let i = 0; i < tokens.length; i += CHUNK_TOKENS) {
      if (aborted()) return;
      const text = decode(tokens.slice(i, i + CHUNK_TOKENS));
      yield out([{ type: 'text_delta', index, text }], text);
      await new Promise((resolve) => setImmediate(resolve));
    }
    yield out([{ type: 'block_stop', index }]);
  }
  yield out([{ type: 'finish', stopReason: answer.stopReason, ...(answer.stopSequence ? { stopSequence: answer.stopSequence } : {}), usage: answer.usage }]);
  const finish = Object.entries(STOP).find(([, s]) => s === answer.stopReason)![0] as FinishReason;
  yield { type: 'end', finish, stopSequence: answer.stopSequence ?? null, usage: answer.usage };
}
