import { countTokens, setMergeCacheSize } from 'gpt-tokenizer';

// Counting tokens, with nothing of the app imported: the token thread (token-thread.ts) loads this
// file too.
//
// The tokenizer's byte-pair merge is quadratic in the length of one pre-tokenized chunk (a run of
// letters without a space, of emoji, of spaces): 100,000 letters "a" took 11 s, 100,000 spaces 14 s.
// So a text is counted in pieces of at most PIECE UTF-16 units. A piece ends before a space that
// follows a non-space and precedes one: the tokenizer's own pattern always ends a chunk there (no
// chunk holds a space after anything but whitespace), so ordinary text counts exactly as it would
// whole. Only a run longer than PIECE with no such space is cut inside, which may count a token more
// per cut. Ordinary text costs the same either way (~1 µs per 40 characters).

const PIECE = 256;

// The tokenizer keeps a cache of merged chunks; once its default 100,000 entries are full, each
// eviction walks the holes its deletions left: 2 MB of random words took 14.5 s. With 1,000
// entries: 2.2 s, and ordinary text loses little (2 MB of English 91 ms, 76 ms with 100,000).
setMergeCacheSize(1000);

/**
 * The longest token of o200k_base (gpt-tokenizer's encoding) is 128 bytes, and every token stands
 * for at least one byte. So a text of n UTF-8 bytes has between n/128 and n tokens, and since a
 * UTF-16 unit is at least one byte, at least n/128 tokens for n UTF-16 units too.
 */
export const MAX_TOKEN_BYTES = 128;

// A prompt may well contain "<|endoftext|>": it is text to count, not an error.
const PLAIN = { disallowedSpecial: new Set<string>() };

const isSpace = (unit: number) => unit === 32 || (unit >= 9 && unit <= 13) || unit === 0xa0 || unit === 0x3000 || (unit >= 0x2000 && unit <= 0x200a) || unit === 0x2028 || unit === 0x2029 || unit === 0x202f || unit === 0x205f || unit === 0x1680 || unit === 0x85 || unit === 0xfeff;

function pieceEnd(text: string, start: number): number {
  const limit = start + PIECE;
  if (limit >= text.length) return text.length;
  for (let at = text.lastIndexOf(' ', limit); at > start; at = text.lastIndexOf(' ', at - 1)) {
    if (!isSpace(text.charCodeAt(at - 1)) && !isSpace(text.charCodeAt(at + 1))) return at;
  }
  // No chunk boundary we can be sure of: cut, but never between the halves of a surrogate pair.
  const unit = text.charCodeAt(limit - 1);
  return unit >= 0xd800 && unit <= 0xdbff ? limit - 1 : limit;
}

/** The tokens of `text`; counting stops once past `limit` (the result is then only known to be above it). */
export function countText(text: string, limit = Infinity): number {
  if (text.length <= PIECE) return countTokens(text, PLAIN);
  let tokens = 0;
  for (let start = 0; start < text.length && tokens <= limit; ) {
    const end = pieceEnd(text, start);
    tokens += countTokens(text.slice(start, end), PLAIN);
    start = end;
  }
  return tokens;
}

/** Each text's count, or null once together they pass `limit`. */
export function countTexts(texts: string[], limit: number): number[] | null {
  const counts: number[] = [];
  let total = 0;
  for (const text of texts) {
    const tokens = countText(text, limit - total);
    total += tokens;
    if (total > limit) return null;
    counts.push(tokens);
  }
  return counts;
}
