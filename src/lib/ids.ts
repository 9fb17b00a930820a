import { randomFillSync } from 'node:crypto';

// ULID-shaped ids (`task_01J...`): 10 characters of millisecond time, then 16 random characters,
// in Crockford base32, so ids sort by creation time. Random bytes come from a pool refilled in
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

export const newId = (prefix: string): string => `${prefix}_${encodeTime(Date.now())}${encodeRandom()}`;
