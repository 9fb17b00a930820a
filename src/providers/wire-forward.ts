import { StringDecoder } from 'node:string_decoder';
import type { StreamDecoder, TextStreamEvent, WireFormat } from '../core/text/index.ts';
import { FORMATS } from '../formats/index.ts';
import { badGateway } from '../http/errors.ts';
import type { FinishReason, TextChunk, TextRequest } from '../modules/text/text.types.ts';
import { laterUsage, usageOf, type ReportedUsage } from '../modules/text/tokens.ts';
import { maxAnswerBytes, UpstreamAnswerCut } from './upstream-read.ts';
import { TextUpstreamUnavailable } from '../modules/text/text.types.ts';
import { reportedUsage } from './wire-usage.ts';

// A same-format stream of chat completions, Responses or the Gemini API, forwarded as the upstream
// wrote it: whole events, one write per upstream read. Parsing and re-encoding every event cost
// several times a bare proxy's CPU, so only the events that carry the usage, the end or an error
// are parsed, found by a substring of theirs (the messages format has its own: messages.events.ts).
// The text is read from the forwarded events only when a stream ended without the upstream's usage.

const MARKS: Record<Exclude<WireFormat, 'messages'>, string[]> = {
  chat: ['"usage":{', '"finish_reason":"', '"error"', '[DONE]'],
  responses: ['"response.completed"', '"response.incomplete"', '"response.failed"', '"error"'],
  gemini: ['"usageMetadata"', '"finishReason"', '"error"'],
};
const FINISH: Record<string, FinishReason> = { end_turn: 'stop', refusal: 'stop', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', tool_use: 'tool_calls' };
const BOUNDARY = /\r?\n\r?\n/;

/** The end of the last whole event in `text` (after its blank line), or -1. */
function lastBoundary(text: string): number {
  const lf = text.lastIndexOf('\n\n');
  const crlf = text.lastIndexOf('\r\n\r\n');
  return Math.max(lf < 0 ? -1 : lf + 2, crlf < 0 ? -1 : crlf + 4);
}

const dataOf = (event: string): string =>
  event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');

const parse = (data: string): unknown => {
  if (data === '[DONE]') return data;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
};

/** A chat chunk that carries only the usage (choices empty). */
const usageOnly = (data: unknown) => Array.isArray((data as { choices?: unknown[] })?.choices) && (data as { choices: unknown[] }).choices.length === 0;

export async function* forwardWire(format: Exclude<WireFormat, 'messages'>, body: AsyncIterable<Buffer>, request: TextRequest, hideUsage: boolean): AsyncGenerator<TextChunk> {
  const marks = MARKS[format];
  const ends = FORMATS[format].streamDecoder();
  const counter = FORMATS[format].streamDecoder();
  const decoder = new StringDecoder('utf8');
  let reported: ReportedUsage | undefined;
  let finish: Extract<TextStreamEvent, { type: 'finish' }> | undefined;
  const forwarded: string[] = [];
  let pending = '';
  const read = function* (block: string): Generator<TextChunk> {
    let out = block;
    if (marks.some((mark) => block.includes(mark))) {
      const events = block.split(BOUNDARY);
      const kept: string[] = [];
      for (const event of events) {
        const data = marks.some((mark) => event.includes(mark)) ? parse(dataOf(event)) : undefined;
        const seen = data === undefined ? [] : ends.push(data, /^event: ?(.*)$/m.exec(event)?.[1]);
        const failed = seen.find((e) => e.type === 'error');
        if (failed && failed.type === 'error') {
          if (kept.length) yield pass(`${kept.join('\n\n')}\n\n`);
          throw badGateway(`upstream stream failed: ${failed.message}`);
        }
        finish = (seen.find((e) => e.type === 'finish') as typeof finish) ?? finish;
        const now = data === undefined ? undefined : reportedUsage(format, data);
        if (now) reported = laterUsage(reported, now);
        if (!(hideUsage && data !== undefined && usageOnly(data))) kept.push(event);
      }
      out = kept.filter((e) => e !== '').map((e) => `${e}\n\n`).join('');
      if (now(reported)) yield { type: 'usage', usage: reported! };
    }
    if (out) yield pass(out);
  };
  let lastUsage: ReportedUsage | undefined;
  const now = (usage: ReportedUsage | undefined) => usage !== lastUsage && (lastUsage = usage) !== undefined;
  const pass = (text: string): TextChunk => {
    forwarded.push(text);
    return { type: 'events', parts: [Buffer.from(text)], text: () => textOf(counter, text) };
  };
  for await (const chunk of body) {
    pending += decoder.write(chunk);
    const end = lastBoundary(pending);
    if (end < 0) {
      // An event that never ends would be held without bound: past the cap on answers it is cut.
      if (pending.length > maxAnswerBytes()) throw new TextUpstreamUnavailable(new UpstreamAnswerCut('too_large', maxAnswerBytes()).message);
      continue;
    }
    const block = pending.slice(0, end);
    pending = pending.slice(end);
    yield* read(block);
  }
  if (pending.trim()) yield* read(`${pending}\n\n`);
  for (const e of ends.end()) if (e.type === 'finish') finish = e;
  // A stream cut before the upstream's end has no finish: the text service bills our count.
  if (!finish) return;
  const usage = usageOf(reported, request, () => forwarded.map((text) => textOf(counter, text)).join(''));
  yield { type: 'end', finish: FINISH[finish.stopReason] ?? 'stop', stopSequence: finish.stopSequence ?? null, usage };
}

/** The text and tool arguments in forwarded events; `counter` must see every block once, in order. */
function textOf(counter: StreamDecoder, block: string): string {
  let text = '';
  for (const event of block.split(BOUNDARY)) {
    const data = parse(dataOf(event));
    if (data === undefined) continue;
    for (const e of counter.push(data, /^event: ?(.*)$/m.exec(event)?.[1])) {
      if (e.type === 'text_delta' || e.type === 'thinking_delta') text += e.text;
      else if (e.type === 'arguments_delta') text += e.json;
    }
  }
  return text;
}
