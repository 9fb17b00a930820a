import type { StreamDecoder, TextStreamEvent, WireFormat } from '../core/text/index.ts';
import { FORMATS } from '../formats/index.ts';
import { badGateway } from '../core/errors.ts';
import type { FinishReason, StreamError, TextChunk, TextRequest } from '../core/text/provider.ts';
import { laterUsage, usageOf, type ReportedUsage } from '../lib/tokens/tokens.ts';
import { maxAnswerBytes, UpstreamAnswerCut } from './upstream-read.ts';
import { TextUpstreamUnavailable } from '../core/text/provider.ts';
import { KeptBytes } from '../lib/kept-bytes.ts';
import { reportedUsage } from './wire-usage.ts';
import { BOUNDARY, blankLineEnd, dataOf, firstBoundary, lastBoundary, parseData, startsAt } from './sse-blocks.ts';
import type { OpenStream } from './upstream-stream.ts';
import { ForwardedResponses } from './wire-forward-broken.ts';
import { modelRenamer, responseNamed } from './wire-rename.ts';

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

/** The name on an event's `event:` line. */
const nameOf = (event: string) => /^event: ?(.*)$/m.exec(event)?.[1];

const FINAL = new Set(['response.completed', 'response.incomplete']);
const isFinalResponse = (data: unknown) =>
  FINAL.has((data as { type?: unknown })?.type as string) && typeof (data as { response?: unknown }).response === 'object' && (data as { response?: unknown }).response !== null;

// A Responses stream names each event on its `event:` line: the events to read are found there, in
// one walk over the block's event boundaries, instead of by searching the whole block for each mark
// (its done events repeat the whole text, so a search costs as much as the text, once per mark).
const RESPONSES_READ = ['response.completed', 'response.incomplete', 'response.failed', 'error'].map((name) => Buffer.from(`event: ${name}\n`));
const EVENT_LINE = Buffer.from('event: ');
const CR = 0x0d;

const [E, R] = [0x65, 0x72];
/** The first letters after `event: response.` of the names read (completed, incomplete, failed). */
const AFTER_RESPONSE = new Set([0x63, 0x69, 0x66]);

/** Whether the Responses event at `start` is one to read; an event without its name line is read to be sure. */
function namedToRead(block: Buffer, start: number): boolean {
  if (!startsAt(block, start, EVENT_LINE)) return true;
  // Byte checks first: most events (deltas, done events) are told apart without a comparison.
  const first = block[start + EVENT_LINE.length];
  const candidate = first === E || (first === R && AFTER_RESPONSE.has(block[start + EVENT_LINE.length + 9]!));
  if (!candidate) return false;
  // A loop, not .some(line => ...): a closure over `block` and `start` made V8 allocate their context on every call.
  for (const line of RESPONSES_READ) if (startsAt(block, start, line)) return true;
  return false;
}

/** A chat chunk that carries only the usage (choices empty). */
const usageOnly = (data: unknown) => Array.isArray((data as { choices?: unknown[] })?.choices) && (data as { choices: unknown[] }).choices.length === 0;

export async function* forwardWire(format: Exclude<WireFormat, 'messages'>, open: OpenStream, request: TextRequest, hideUsage: boolean): AsyncGenerator<TextChunk> {
  const body = await open();
  const marks = MARKS[format].map((mark) => Buffer.from(mark));
  const ends = FORMATS[format].streamDecoder();
  let reported: ReportedUsage | undefined;
  let lastUsage: ReportedUsage | undefined;
  let finish: Extract<TextStreamEvent, { type: 'finish' }> | undefined;
  const forwarded = new KeptBytes();
  // Read once, when the stream ended without its usage.
  const forwardedText = () => forwarded.readOnce((bytes) => textOf(FORMATS[format].streamDecoder(), bytes.toString('utf8')));
  let pending: Buffer | undefined;
  // A Responses stream tells the route its whole answer (TextChunk `answer`): null until it is seen.
  let answer: unknown = format === 'responses' ? null : undefined;
  // A Responses stream that breaks off ends numbered on from the upstream's events (wire-forward-broken.ts).
  const responses = format === 'responses' ? new ForwardedResponses() : undefined;
  const broken = responses && ((error: StreamError) => responses.broken(error, reported));
  // The caller's name for the model, where the upstream wrote its own (wire-rename.ts).
  const model = request.wire?.model ?? request.model;
  const rename = modelRenamer(format, model);
  const pass = (block: Buffer): TextChunk => {
    const bytes = rename(block);
    forwarded.push([bytes]);
    responses?.seen(bytes);
    return { type: 'events', parts: [bytes], text: forwardedText, answer, broken };
  };
  /** Reads an event's data: its finish, usage and (Responses) answer; the message when it is the upstream's error. */
  const see = (data: unknown, name: string | undefined): string | undefined => {
    const seen = ends.push(data, name);
    // Read before an error returns: a Responses upstream's response.failed reports the usage of
    // the prompt it received and what it produced, which the cut call pays.
    const now = reportedUsage(format, data);
    if (now) reported = laterUsage(reported, now);
    const failed = seen.find((e) => e.type === 'error');
    if (failed && failed.type === 'error') return failed.message;
    finish = (seen.find((e) => e.type === 'finish') as typeof finish) ?? finish;
    if (format === 'responses' && isFinalResponse(data)) answer = responseNamed((data as { response: unknown }).response, model);
    return undefined;
  };
  /** The upstream's error ends the stream; what it reported with it (response.failed's usage) is paid first. */
  const failing = function* (failure: string): Generator<TextChunk, never> {
    if (reported !== lastUsage) yield { type: 'usage', usage: (lastUsage = reported)! };
    throw badGateway(`upstream stream failed: ${failure}`);
  };
  // A Responses block of LF lines is walked event by event and only the events named to read are
  // decoded; the block goes on as the bytes that came (its done events repeat the whole text, so
  // decoding the block and joining its events again cost as much as the text, several times over).
  const readNamed = function* (block: Buffer): Generator<TextChunk> {
    for (let start = 0; start < block.length; ) {
      const next = blankLineEnd(block, start);
      const end = next < 0 ? block.length : next;
      const event = namedToRead(block, start) ? block.toString('utf8', start, end) : undefined;
      const data = event === undefined ? undefined : parseData(dataOf(event));
      const failure = data === undefined ? undefined : see(data, nameOf(event!));
      if (failure !== undefined) {
        if (start > 0) yield pass(block.subarray(0, start));
        yield* failing(failure);
      }
      start = end;
    }
    if (reported !== lastUsage) yield { type: 'usage', usage: (lastUsage = reported)! };
    yield pass(block);
  };
  // Other blocks are read whole when they hold a marked event (most hold none: they go on unread).
  const read = function* (block: Buffer): Generator<TextChunk> {
    if (format === 'responses' && !block.includes(CR)) return yield* readNamed(block);
    if (format !== 'responses' && !marks.some((mark) => block.includes(mark))) return yield pass(block);
    const kept: string[] = [];
    for (const event of block.toString('utf8').split(BOUNDARY)) {
      const data = MARKS[format].some((mark) => event.includes(mark)) ? parseData(dataOf(event)) : undefined;
      const failure = data === undefined ? undefined : see(data, nameOf(event));
      if (failure !== undefined) {
        if (kept.length) yield pass(Buffer.from(kept.map((e) => `${e}\n\n`).join('')));
        yield* failing(failure);
      }
      if (event !== '' && !(hideUsage && data !== undefined && usageOnly(data))) kept.push(event);
    }
    if (reported !== lastUsage) yield { type: 'usage', usage: (lastUsage = reported)! };
    if (kept.length) yield pass(Buffer.from(kept.map((e) => `${e}\n\n`).join('')));
  };
  let ended = false;
  try {
    for await (const chunk of body) {
      let bytes = chunk;
      if (pending) {
        // The event the last read left unfinished is joined with this read up to its first boundary
        // only, not with all of it (messages.events.ts says why).
        const first = firstBoundary(chunk);
        const joined = Buffer.concat([pending, first < 0 ? chunk : chunk.subarray(0, first)]);
        pending = undefined;
        if (first < 0) bytes = joined;
        else {
          yield* read(joined);
          if (first === chunk.length) continue;
          bytes = chunk.subarray(first);
        }
      }
      const end = lastBoundary(bytes);
      if (end < 0) {
        // An event that never ends would be held without bound: past the cap on answers it is cut.
        if (bytes.length > maxAnswerBytes()) throw new TextUpstreamUnavailable(new UpstreamAnswerCut('too_large', maxAnswerBytes()).message);
        pending = bytes;
        continue;
      }
      pending = end < bytes.length ? bytes.subarray(end) : undefined;
      yield* read(bytes.subarray(0, end));
    }
    if (pending?.toString('utf8').trim()) yield* read(Buffer.concat([pending, Buffer.from('\n\n')]));
    for (const e of ends.end()) if (e.type === 'finish') finish = e;
    // Closed cleanly before its finish: as cut off as a broken connection (the caller gets the
    // gateway's error event, the text service bills what was sent and produced).
    if (!finish) throw badGateway('upstream ended the stream before its finish');
    const usage = usageOf(reported, request, forwardedText);
    ended = true;
    yield { type: 'end', finish: FINISH[finish.stopReason] ?? 'stop', stopSequence: finish.stopSequence ?? null, usage };
  } finally {
    // Ended with its usage: the forwarded text will not be read. A stream cut short keeps it for the text service.
    if (ended) forwarded.release();
  }
}

/** The text and tool arguments in forwarded events; `counter` must see every block once, in order. */
function textOf(counter: StreamDecoder, block: string): string {
  let text = '';
  for (const event of block.split(BOUNDARY)) {
    const data = parseData(dataOf(event));
    if (data === undefined) continue;
    for (const e of counter.push(data, nameOf(event))) {
      if (e.type === 'text_delta' || e.type === 'thinking_delta') text += e.text;
      else if (e.type === 'arguments_delta') text += e.json;
    }
  }
  return text;
}
