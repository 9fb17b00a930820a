import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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

/** Constant-time comparison of two hex digests of equal length. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
