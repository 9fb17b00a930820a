// Byte helpers for the same-format stream forwarders (messages.events.ts, wire-forward.ts), which cut
// an upstream's SSE bytes into whole events without decoding them.

const NEWLINE = 0x0a;

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
