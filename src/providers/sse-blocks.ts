// Byte helpers for the same-format stream forwarders (messages.events.ts, wire-forward.ts), which cut
// an upstream's SSE bytes into whole events without decoding them, and read the few they must.

const NEWLINE = 0x0a;
/** The blank line between two events, in LF or CRLF lines. */
export const BOUNDARY = /\r?\n\r?\n/;

/**
 * The end of the first `\n\n` at or after `start` (the index after it), or -1. Found newline by
 * newline: a search for one byte is a memchr, while each search for the two-byte separator set a
 * string search up (~3 times as long over a stream's events).
 */
export function blankLineEnd(block: Buffer, start: number): number {
  for (let at = block.indexOf(NEWLINE, start); at >= 0; at = block.indexOf(NEWLINE, at + 1)) {
    if (block[at + 1] === NEWLINE) return at + 2;
  }
  return -1;
}

/** Whether `block` holds `prefix` at `at`. */
export function startsAt(block: Buffer, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > block.length) return false;
  for (let i = 0; i < prefix.length; i++) if (block[at + i] !== prefix[i]) return false;
  return true;
}

const LF = Buffer.from('\n\n');
const CRLF = Buffer.from('\r\n\r\n');

/** The end of the first whole event in `bytes` (after its blank line), or -1. */
export function firstBoundary(bytes: Buffer): number {
  const lf = blankLineEnd(bytes, 0);
  // A CRLF boundary may end on the first \n of that \n\n.
  const crlf = (lf < 0 ? bytes : bytes.subarray(0, lf - 1)).indexOf(CRLF);
  return crlf >= 0 ? crlf + 4 : lf;
}

/** The end of the last whole event in `bytes` (after its blank line), or -1. */
export function lastBoundary(bytes: Buffer): number {
  const lf = bytes.lastIndexOf(LF);
  // Only a CRLF boundary that ends after the last LF one counts: it starts at lf - 1 or later. (A
  // search of the whole read for CRLF, in a stream that has none, cost as much as the walk.)
  const from = Math.max(0, lf - 1);
  const crlf = (from === 0 ? bytes : bytes.subarray(from)).lastIndexOf(CRLF);
  return Math.max(lf < 0 ? -1 : lf + 2, crlf < 0 ? -1 : from + crlf + 4);
}

/** An event's data: its `data:` lines, joined. */
export const dataOf = (event: string): string =>
  event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');

/** An event's data as JSON (`[DONE]` as it is); undefined when it is neither. */
export const parseData = (data: string): unknown => {
  if (data === '[DONE]') return data;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
};
