import { badGateway } from '../../core/errors.ts';
import { TextUpstreamUnavailable } from '../../core/text/provider.ts';
import type { FinishReason, TextChunk, TextRequest } from '../../core/text/provider.ts';
import { laterUsage, usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import { messagesClasses, messagesStartClasses, type MessagesEvent } from './messages.answers.ts';
import { maxAnswerBytes, UpstreamAnswerCut } from '../upstream-read.ts';
import { KeptBytes } from '../../lib/kept-bytes.ts';
import { blankLineEnd, startsAt } from '../sse-blocks.ts';
import type { OpenStream } from '../upstream-stream.ts';

// The same-format stream: a messages caller, a messages upstream. Parsing every event into the
// neutral form and encoding it back cost the gateway ~3/4 of its time per stream (a JSON parse, a
// stringify and a socket write per event), so the upstream's bytes are forwarded as they arrive,
// cut at the last whole event (a caller never sees half an event when the upstream breaks off).
// Events are told apart by their `event:` line, and only those that matter are parsed:
// message_start (its id and model renamed, its input tokens read), message_delta (the finish and
// output tokens) and error (the stream ends there, as on every stream, with the gateway's own
// error event); an event without a name is parsed to be sure. Walking the separators costs about
// a third of searching the bytes for those names.

export const FINISH: Record<string, FinishReason> = { end_turn: 'stop', stop_sequence: 'stop_sequence', max_tokens: 'max_tokens', tool_use: 'tool_calls' };

/** What message_start says to the caller instead of the upstream's id and model name. */
export interface Rename {
  id: string;
  model: string;
}

const SEPARATOR = Buffer.from('\n\n');
const EVENT_LINE = Buffer.from('event: ');
const READ = ['message_start', 'message_delta', 'error'].map((name) => Buffer.from(`event: ${name}\n`));
const [M, E] = [0x6d, 0x65];


/** Whether the event at `start` is one to parse (every name read starts with m or e). */
function toRead(block: Buffer, start: number): boolean {
  if (!startsAt(block, start, EVENT_LINE)) return true;
  const first = block[start + EVENT_LINE.length];
  if (first !== M && first !== E) return false;
  // A loop, not READ.some(line => ...): a closure over `block` and `start` made V8 allocate their
  // context on every call, for every event (measured: ~10 KB of garbage per 200-event stream).
  for (const line of READ) if (startsAt(block, start, line)) return true;
  return false;
}

/** The parsed `data:` of the event between `start` and `end`; undefined if it is not JSON. */
function dataOf(block: Buffer, start: number, end: number): MessagesEvent | undefined {
  const data = block
    .toString('utf8', start, end)
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/**
 * What whole events produced: text, thinking and tool-call arguments (read only when a call cut
 * short must be counted; each is output the upstream bills).
 */
function eventsText(block: Buffer): string {
  let text = '';
  for (let start = 0; start < block.length; ) {
    const end = eventEnd(block, start);
    const data = dataOf(block, start, end);
    const delta = data?.type === 'content_block_delta' ? data.delta : undefined;
    if (delta?.type === 'text_delta') text += delta.text ?? '';
    else if (delta?.type === 'thinking_delta') text += delta.thinking ?? '';
    else if (delta?.type === 'input_json_delta') text += delta.partial_json ?? '';
    start = end;
  }
  return text;
}

/** The end of the event at `start` (after its blank line), or the block's end. */
function eventEnd(block: Buffer, start: number): number {
  const end = blankLineEnd(block, start);
  return end < 0 ? block.length : end;
}

/** Where a block is cut: around message_start (renamed) and before an error event. */
interface Cut {
  renamed: Buffer | undefined;
  before: number;
  from: number;
  to: number;
}

/** Cuts an upstream's stream into whole events and reads what billing and the caller need. */
export class MessagesEvents {
  /** The usage the upstream's message_start and message_delta reported so far. */
  reported?: ReportedUsage;
  finish: FinishReason = 'stop';
  stopSequence: string | null = null;
  /** Whether the upstream's message_delta gave its stop reason: a stream that ends before it was cut. */
  stopped = false;
  /** The message of the upstream's error event, once one came. */
  failure?: string;
  private pending?: Buffer;
  private started = false;
  private readonly forwarded = new KeptBytes();

  constructor(private readonly rename: Rename) {}

  /** The whole events completed by `chunk`, ready to forward in one write (undefined: none yet). */
  take(chunk: Buffer): Buffer[] | undefined {
    const pending = this.pending;
    if (!pending) return this.cut(chunk);
    // The event the last read left unfinished is joined with this read up to its first separator
    // only, not with all of it: copying every read once more was the stream's largest copy. (A
    // separator split between the two reads is found inside the joined bytes.)
    const separator = chunk.indexOf(SEPARATOR);
    this.pending = undefined;
    if (separator < 0) return this.cut(Buffer.concat([pending, chunk]));
    const end = separator + SEPARATOR.length;
    const first = this.read(Buffer.concat([pending, chunk.subarray(0, end)]));
    // An error event ends the stream: nothing after it is read or forwarded.
    if (this.failure !== undefined || end === chunk.length) return first;
    const rest = this.cut(chunk.subarray(end));
    return first && rest ? [...first, ...rest] : (first ?? rest);
  }

  /** Whole events from `bytes`, which start with an event; the unfinished one at its end kept. */
  private cut(bytes: Buffer): Buffer[] | undefined {
    const last = bytes.lastIndexOf(SEPARATOR);
    if (last < 0) {
      // An event that never ends would be held without bound: past the cap on answers it is cut.
      const cap = maxAnswerBytes();
      if (bytes.length > cap) throw new TextUpstreamUnavailable(new UpstreamAnswerCut('too_large', cap).message);
      this.pending = bytes;
      return undefined;
    }
    const end = last + SEPARATOR.length;
    this.pending = end < bytes.length ? bytes.subarray(end) : undefined;
    return this.read(bytes.subarray(0, end));
  }

  /** What the upstream sent after its last separator, when it ended the stream itself. */
  rest(): Buffer[] | undefined {
    const bytes = this.pending;
    this.pending = undefined;
    return bytes && this.read(bytes);
  }

  /** The text forwarded (for a stream that ended without its usage): read once, at its end. */
  text(): string {
    return this.forwarded.readOnce(eventsText);
  }

  private read(block: Buffer): Buffer[] | undefined {
    const cut: Cut = { renamed: undefined, before: 0, from: 0, to: block.length };
    for (let start = 0; start < block.length; ) {
      const end = eventEnd(block, start);
      if (toRead(block, start) && this.readEvent(block, start, end, cut)) break;
      start = end;
    }
    // What goes out: the bytes before message_start, the renamed message_start as a part of its own
    // (no copy of the block around it), then the rest up to an error event.
    const parts: Buffer[] = [];
    if (cut.renamed) {
      if (cut.before > 0) parts.push(block.subarray(0, cut.before));
      parts.push(cut.renamed);
    }
    if (cut.to > cut.from) parts.push(cut.from === 0 && cut.to === block.length ? block : block.subarray(cut.from, cut.to));
    if (parts.length === 0) return undefined;
    this.forwarded.push(parts);
    return parts;
  }

  /** Reads one event that matters; true when it ends the stream (the upstream's error). */
  private readEvent(block: Buffer, start: number, end: number, cut: Cut): boolean {
    const data = dataOf(block, start, end);
    if (data?.type === 'error') {
      this.failure = String(data.error?.message ?? 'error');
      cut.to = start;
      return true;
    }
    if (data?.type === 'message_start' && !this.started) {
      cut.renamed = this.renamed(data);
      cut.before = start;
      cut.from = end;
    } else if (data?.type === 'message_delta') {
      if (typeof data.delta?.stop_reason === 'string') this.stopped = true;
      this.finish = FINISH[data.delta?.stop_reason ?? ''] ?? 'stop';
      this.stopSequence = data.delta?.stop_sequence ?? null;
      this.reported = laterUsage(this.reported, messagesClasses(data.usage));
    }
    return false;
  }

  /** The stream ended with its usage: what was forwarded will not be read. */
  release(): void {
    this.forwarded.release();
  }

  private renamed(data: MessagesEvent): Buffer {
    this.started = true;
    const message = data.message ?? {};
    this.reported = laterUsage(this.reported, messagesStartClasses(message.usage));
    return Buffer.from(`event: message_start\ndata: ${JSON.stringify({ ...data, message: { ...message, id: this.rename.id, model: this.rename.model } })}\n\n`);
  }
}

/** A messages upstream's stream, forwarded as whole events, then the call's finish and usage. */
export async function* forwardEvents(open: OpenStream, request: TextRequest, rename: Rename): AsyncGenerator<TextChunk> {
  const body = await open();
  const events = new MessagesEvents(rename);
  let reported: ReportedUsage | undefined;
  let ended = false;
  /** What one read brought, in the order the caller gets it. */
  const chunksOf = (parts: Buffer[] | undefined): TextChunk[] => {
    const out: TextChunk[] = [];
    // message_start's usage, paid if the stream breaks off (the reference changes only when an event reported some).
    if (events.reported !== reported) out.push({ type: 'usage', usage: (reported = events.reported)! });
    if (parts) out.push({ type: 'events', parts, text: () => events.text() });
    return out;
  };
  try {
    // One loop over the body, no generator of the reads between: each one cost every read its turns.
    for await (const chunk of body) {
      for (const out of chunksOf(events.take(chunk))) yield out;
      // The events before the upstream's error went out; the stream ends there.
      if (events.failure !== undefined) break;
    }
    if (events.failure === undefined) for (const out of chunksOf(events.rest())) yield out;
    if (events.failure !== undefined) throw badGateway(`upstream stream failed: ${events.failure}`);
    // Closed cleanly before its stop reason: as cut off as a broken connection (the caller gets the
    // gateway's error event, the call pays what was sent and produced).
    if (!events.stopped) throw badGateway('upstream ended the stream before its stop reason');
    const usage = usageOf(events.reported, request, () => events.text());
    ended = true;
    yield { type: 'end', finish: events.finish, stopSequence: events.stopSequence, usage };
  } finally {
    // Ended with its usage: the forwarded text will not be read. A stream cut short keeps it for the text service.
    if (ended) events.release();
  }
}
