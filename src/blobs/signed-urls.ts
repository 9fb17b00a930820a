import type { RenderSpec } from '../core/task-provider.ts';
export type { RenderSpec };
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.ts';
import { claimMeta, getMeta } from '../db/meta.ts';
import { blobKey, expiryOfKey, extensionOfKey } from './blob-store.ts';

// A result link names a key in the file store and the link's expiry; the HMAC covers both, and the
// link's extension must be the key's. A simulated file's link also carries its render parameters:
// the file is rendered into the store on its first download (by whichever process serves it).

export interface SignedFile {
  /** The stored file; made from `spec` when absent. */
  key?: string;
  /** Render parameters of a simulated file not stored yet. */
  spec?: RenderSpec;
  /** Unix seconds. */
  expiresAt: number;
}

export type VerifiedFile = SignedFile & { key: string };

export function extensionOf(spec: RenderSpec): string {
  if (spec.k === 'image') return spec.f === 'jpeg' ? 'jpg' : spec.f;
  return spec.k === 'video' ? 'mp4' : 'png';
}

/** The key a simulated file is stored under: the same for the same parameters and expiry. */
export function renderKey(spec: RenderSpec, expiresAt: number): string {
  const digest = createHash('sha256').update(JSON.stringify(spec)).digest('base64url').slice(0, 32);
  return blobKey(expiresAt, `r${digest}`, extensionOf(spec));
}

export function keyOf(file: SignedFile): string {
  if (file.key) return file.key;
  if (!file.spec) throw new Error('a signed file needs a key or render parameters');
  return renderKey(file.spec, file.expiresAt);
}

export class FileSigner {
  constructor(
    private readonly secret: string,
    private readonly baseUrl: string,
  ) {}

  private mac(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url').slice(0, 32);
  }

  /** The file name part of the link: `<payload>.<signature>.<ext>`. */
  name(file: SignedFile): string {
    const key = keyOf(file);
    const payload = Buffer.from(JSON.stringify({ b: key, e: file.expiresAt, ...(file.spec ? { r: file.spec } : {}) })).toString('base64url');
    return `${payload}.${this.mac(payload)}.${extensionOfKey(key)}`;
  }

  url(file: SignedFile): string {
    return `${this.baseUrl}/files/${this.name(file)}`;
  }

  /** The file a name stands for, or undefined when the name was not signed by us. Expiry is the caller's. */
  verify(name: string): VerifiedFile | undefined {
    const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})\.([a-z0-9]{2,4})$/.exec(name);
    if (!match) return undefined;
    const [, payload, signature, extension] = match;
    const expected = Buffer.from(this.mac(payload!));
    const given = Buffer.from(signature!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let file: VerifiedFile;
    try {
      const { b, e, r } = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
      if (typeof b !== 'string' || !Number.isInteger(e)) return undefined;
      file = { key: b, expiresAt: e, ...(r ? { spec: r as RenderSpec } : {}) };
    } catch {
      return undefined;
    }
    // The signature covers the payload only, and the key names the format: an extension that
    // disagrees would serve these bytes under another type, so it is no link of ours.
    if (expiryOfKey(file.key) !== file.expiresAt) return undefined;
    return extension === extensionOfKey(file.key) ? file : undefined;
  }
}

/** One signing secret for every process sharing the database: FILE_URL_SECRET, or one made at first start. */
export async function fileSigningSecret(db: Kysely<Database>, configured?: string): Promise<string> {
  if (configured) return configured;
  // Of processes starting at once, one writes its secret and all read that one.
  await claimMeta(db, 'file_url_secret', randomBytes(32).toString('base64url'));
  const secret = await getMeta(db, 'file_url_secret');
  if (secret === undefined) throw new Error('the file-URL secret was not stored');
  return secret;
}
