import type { Readable } from 'node:stream';

// Where result files live. Keys are written once and never change (a retry that stores the same
// part again writes the same bytes), so a key is also its ETag. Every key starts with the expiry of
// the links over it, zero-padded: keys sort by expiry, and a sweeper reads the expiry from the key
// alone and stops at the first one still valid.

export interface BlobInfo {
  key: string;
  size: number;
  contentType: string;
}

export interface ByteSpan {
  /** Inclusive offsets. */
  start: number;
  end: number;
}

export interface PutOptions {
  contentType: string;
  /** The body is refused (and nothing stored) once it passes this many bytes. */
  maxBytes?: number;
}

export interface BlobStore {
  /** Stores the whole body under `key`, or nothing at all (a failed or cut body leaves no object). */
  put(key: string, body: Readable | Buffer, options: PutOptions): Promise<BlobInfo>;
  /** The object's bytes, or one span of them; undefined when there is no such object. */
  get(key: string, span?: ByteSpan): Promise<{ info: BlobInfo; body: Readable } | undefined>;
  head(key: string): Promise<BlobInfo | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every object whose expiry is before `nowSeconds`; safe when several processes sweep at once. */
  sweep(nowSeconds?: number): Promise<number>;
  close?(): Promise<void>;
}

export class BlobTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
  }
}

const EXPIRY_DIGITS = 10;

/** `<expiry>-<name>.<ext>`: `name` is made of [A-Za-z0-9_-] by the caller. */
export function blobKey(expiresAt: number, name: string, extension: string): string {
  return `${String(expiresAt).padStart(EXPIRY_DIGITS, '0')}-${name}.${extension}`;
}

const KEY = /^(\d{10})-[A-Za-z0-9_-]{1,200}\.([a-z0-9]{2,4})$/;

export function isBlobKey(key: string): boolean {
  return KEY.test(key);
}

/** The expiry a key carries, or undefined for a name that is not a key of ours. */
export function expiryOfKey(key: string): number | undefined {
  const match = KEY.exec(key);
  return match ? Number(match[1]) : undefined;
}

export function extensionOfKey(key: string): string | undefined {
  return KEY.exec(key)?.[2];
}
