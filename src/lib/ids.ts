import { randomFillSync } from 'node:crypto';

// ULID-shaped ids (`task_01J...`): 10 characters of millisecond time, then 16 random characters,
// in Crockford base32, so ids sort by creation time. Within one millisecond a process's ids are
// monotonic (the ULID spec's rule: the random part of the previous id plus one), so they sort in
// the order they were made: admission control sends tasks out in id order. Random bytes come from a pool refilled in
// bulk, as one system call per id is measurable on the submit path.

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const pool = Buffer.alloc(4096);
let offset = pool.length;

// Ids made within one millisecond share their time part: it is encoded once per millisecond.
let encodedMs = -1;
let encodedTime = '';

function encodeTime(ms: number): string {
  if (ms === encodedMs) return encodedTime;
  let out = '';
  for (let i = 0, rest = ms; i < 10; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  encodedMs = ms;
  encodedTime = out;
  return out;
}

/** 80 random bits from the pool as 16 characters of 5 bits each (read in place: no Buffer per id). */
function encodeRandom(): string {
  if (offset + 10 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const end = offset + 10; offset < end; offset++) {
    buffer = (buffer << 8) | pool[offset]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

let lastRandom = '';

/** The previous random part plus one, in base 32 (an 80-bit overflow within a millisecond cannot happen). */
function increment(random: string): string {
  for (let i = random.length - 1; i >= 0; i--) {
    const digit = ALPHABET.indexOf(random[i]!);
    if (digit < 31) return random.slice(0, i) + ALPHABET[digit + 1] + '0'.repeat(random.length - i - 1);
  }
  return encodeRandom();
}

export function newId(prefix: string): string {
  const ms = Date.now();
  const sameMs = ms === encodedMs && lastRandom !== '';
  const time = encodeTime(ms);
  lastRandom = sameMs ? increment(lastRandom) : encodeRandom();
  return `${prefix}_${time}${lastRandom}`;
}
