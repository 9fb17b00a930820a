import { createHash } from 'node:crypto';
import { decode, encode } from 'gpt-tokenizer';
import type { AnswerPart, ContentPart, TextAnswer, TextStreamEvent, TextRequest as NeutralRequest } from '../../core/text/index.ts';
import { promptTokens } from '../../modules/text/tokens.ts';
import type { FinishReason, TextChunk, TextRequest, TextResult } from '../../modules/text/text.types.ts';
import { answerResult, callerFrames, encodeForCaller } from '../wire-text.ts';
import { simulatedReply } from './text.ts';

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
  const asked = TOOL.exec(textOf(last?.content ?? []));
  const offered = asked && neutral.tools?.some((t) => t.name === asked[1]) && neutral.toolChoice?.type !== 'none';
  if (asked && offered) {
    const args = asked[2] && isJsonObject(asked[2]) ? asked[2] : '{}';
    const id = `call_${createHash('sha256').update(`${asked[1]}${args}${neutral.messages.length}`).digest('hex').slice(0, 24)}`;
    const tool = neutral.tools!.find((t) => t.name === asked[1])!;
    return { content: [{ type: 'tool_call', id, name: asked[1]!, arguments: args, ...(tool.custom ? { custom: true } : {}) }], finish: 'tool_calls', stopSequence: null, output: encode(args).length };
  }
  const { text, finish, stopSequence, outputTokens } = simulatedReply(view);
  return { content: [{ type: 'text', text }], finish, stopSequence, output: outputTokens };
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
  const frames = callerFrames(view.wire!);
  const out = (events: TextStreamEvent[], text = ''): TextChunk => ({ type: 'events', parts: [Buffer.from(frames(events))], text: () => text });
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
