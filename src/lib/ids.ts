import { randomFillSync } from 'node:crypto';

// ULID-shaped ids (`task_01J...`): 10 characters of millisecond time, then 16 random characters,
// in Crockford base32, so ids sort by creation time. Random bytes come from a pool refilled in
// bulk, as one system call per id is measurable on the submit path.

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomBytes10(): Buffer {
  if (offset + 10 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 10);
  offset += 10;
  return bytes;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  // 80 bits -> 16 characters of 5 bits each.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

export const newId = (prefix: string): string => `${prefix}_${encodeTime(Date.now())}${encodeRandom(randomBytes10())}`;
