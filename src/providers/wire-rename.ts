import type { WireFormat } from '../core/text/index.ts';
import { dataOf, parseData } from './sse-blocks.ts';

// A same-format stream names the model as the caller did, as its whole answer does (wire-text.ts)
// and a forwarded messages stream's message_start does: the name the channel maps it to, or the
// dated one an upstream answers with, is not the caller's. Chat chunks carry `model` in every
// chunk: it is replaced in the bytes, without decoding the chunk (an unescaped `"model":` is a key,
// never text, and a chat chunk has no other). Responses events carry it inside the whole response
// (response.created, .in_progress, .completed, ...), whose tools may carry models of their own:
// those few events are decoded and `response.model` set. Gemini's `modelVersion` is the vendor's
// version, which its whole answer keeps too.

const KEY = Buffer.from('"model"');
const QUOTE = 0x22;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** Where the string value of the `"model"` key found at `at` starts and ends (after its quotes), or undefined. */
function valueAt(block: Buffer, at: number): [number, number] | undefined {
  let i = at + KEY.length;
  while (isSpace(block[i])) i++;
  if (block[i] !== COLON) return undefined;
  i++;
  while (isSpace(block[i])) i++;
  if (block[i] !== QUOTE) return undefined;
  const end = block.indexOf(QUOTE, i + 1);
  // A name with an escape in it is left as it came (no model is named so).
  if (end < 0 || block.subarray(i + 1, end).includes(BACKSLASH)) return undefined;
  return [i + 1, end];
}

/** Chat chunks: every `"model": "..."` value that is not the caller's name becomes it. */
function renameChat(block: Buffer, name: Buffer): Buffer {
  const parts: Buffer[] = [];
  let copied = 0;
  for (let from = 0; ; ) {
    const at = block.indexOf(KEY, from);
    if (at < 0) break;
    const value = valueAt(block, at);
    from = value ? value[1] + 1 : at + KEY.length;
    if (!value || block.subarray(value[0], value[1]).equals(name)) continue;
    parts.push(block.subarray(copied, value[0]), name);
    copied = value[1];
  }
  if (parts.length === 0) return block;
  parts.push(block.subarray(copied));
  return Buffer.concat(parts);
}

/** A Responses event's data with `response.model` set to `model`; undefined when it has none to change. */
function renamedData(event: string, model: string): string | undefined {
  const parsed = parseData(dataOf(event)) as { response?: { model?: unknown } } | undefined;
  const response = parsed?.response;
  if (!response || typeof response !== 'object' || typeof response.model !== 'string' || response.model === model) return undefined;
  response.model = model;
  const eol = event.includes('\r\n') ? '\r\n' : '\n';
  const kept = event.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith('data:'));
  return [...kept, `data: ${JSON.stringify(parsed)}`].join(eol);
}

/** Responses events: those that hold `"model"` are decoded, and `response.model` set. */
function renameResponses(block: Buffer, model: string): Buffer {
  if (!block.includes(KEY)) return block;
  const text = block.toString('utf8');
  // Events and the blank lines between them, in order (LF or CRLF).
  const pieces = text.split(/(\r?\n\r?\n)/);
  let changed = false;
  for (let i = 0; i < pieces.length; i += 2) {
    if (!pieces[i]!.includes('"model"')) continue;
    const renamed = renamedData(pieces[i]!, model);
    if (renamed !== undefined) [pieces[i], changed] = [renamed, true];
  }
  return changed ? Buffer.from(pieces.join('')) : block;
}

/**
 * What a forwarded stream's whole-event blocks go through before the caller gets them. An upstream
 * names one model throughout a stream: once the first name it writes is the caller's, every other
 * block goes on without a search.
 */
export function modelRenamer(format: Exclude<WireFormat, 'messages'>, model: string): (block: Buffer) => Buffer {
  if (format === 'gemini') return (block) => block;
  // As it stands between the quotes of a JSON string.
  const bytes = Buffer.from(JSON.stringify(model).slice(1, -1));
  const rename = format === 'chat' ? (block: Buffer) => renameChat(block, bytes) : (block: Buffer) => renameResponses(block, model);
  let named: 'not yet' | 'as the caller' | 'otherwise' = 'not yet';
  return (block) => {
    if (named === 'as the caller') return block;
    if (named === 'not yet') {
      const first = firstValue(block);
      if (!first) return block;
      named = block.subarray(first[0], first[1]).equals(bytes) ? 'as the caller' : 'otherwise';
      if (named === 'as the caller') return block;
    }
    return rename(block);
  };
}

/** The value of the block's first `"model": "..."`, if it has one. */
function firstValue(block: Buffer): [number, number] | undefined {
  for (let at = block.indexOf(KEY); at >= 0; at = block.indexOf(KEY, at + KEY.length)) {
    const value = valueAt(block, at);
    if (value) return value;
  }
  return undefined;
}

/** A whole Response as the caller named its model (the answer a forwarded stream stores). */
export function responseNamed(response: unknown, model: string): unknown {
  if (!response || typeof response !== 'object' || typeof (response as { model?: unknown }).model !== 'string') return response;
  return { ...(response as object), model };
}
