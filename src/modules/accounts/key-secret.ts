import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'sk-gw-';

export interface NewKeySecret {
  plaintext: string;
  hash: string;
  displayPrefix: string;
}

export function hashKey(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

/** A fresh key: shown once to its owner, stored only as its SHA-256 hash and a short display prefix. */
export function generateKeySecret(): NewKeySecret {
  const plaintext = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { plaintext, hash: hashKey(plaintext), displayPrefix: plaintext.slice(0, KEY_PREFIX.length + 6) };
}
