import { createHash, randomBytes } from 'node:crypto';

// A code is `gw-` and 24 base32 characters: 120 random bits, far beyond guessing at the rate a
// wrong code is allowed (redeem.ts). Only its SHA-256 is stored; a code is compared in lower case
// and without surrounding spaces, as people copy it.

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const PREFIX = 'gw-';

export function newCode(): string {
  const bytes = randomBytes(15);
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
  return PREFIX + out;
}

export const codeHash = (code: string): string => createHash('sha256').update(code.trim().toLowerCase()).digest('hex');
