import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.ts';

// Simulated results are deterministic, so a result link carries everything needed to render the
// file again: any process can serve any link, with no shared disk. The HMAC makes the parameters and
// the expiry tamper-proof; a link stops working at its `expires_at`.

export type RenderSpec =
  | { k: 'image'; w: number; h: number; f: 'png' | 'jpeg' | 'webp'; q?: number; s: string; t?: boolean }
  | { k: 'video'; w: number; h: number; d: number; s: string; a?: boolean }
  | { k: 'frame'; w: number; h: number; d: number; s: string };

export interface SignedFile {
  spec: RenderSpec;
  /** Unix seconds. */
  expiresAt: number;
}

export function extensionOf(spec: RenderSpec): string {
  if (spec.k === 'image') return spec.f === 'jpeg' ? 'jpg' : spec.f;
  return spec.k === 'video' ? 'mp4' : 'png';
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
    const payload = Buffer.from(JSON.stringify({ ...file.spec, e: file.expiresAt })).toString('base64url');
    return `${payload}.${this.mac(payload)}.${extensionOf(file.spec)}`;
  }

  url(file: SignedFile): string {
    return `${this.baseUrl}/files/${this.name(file)}`;
  }

  /** The file a name stands for, or undefined when the name was not signed by us. Expiry is the caller's. */
  verify(name: string): SignedFile | undefined {
    const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})\.(png|jpg|webp|mp4)$/.exec(name);
    if (!match) return undefined;
    const [, payload, signature, extension] = match;
    const expected = Buffer.from(this.mac(payload!));
    const given = Buffer.from(signature!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let file: SignedFile;
    try {
      const { e, ...spec } = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
      file = { spec: spec as RenderSpec, expiresAt: Number(e) };
    } catch {
      return undefined;
    }
    // The signature covers the payload only, and the payload names the format: an extension that
    // disagrees would serve these bytes under another type (and cache them again), so it is no link of ours.
    return extension === extensionOf(file.spec) ? file : undefined;
  }
}

/** One signing secret for every process sharing the database: FILE_URL_SECRET, or one made at first start. */
export async function fileSigningSecret(db: Kysely<Database>, configured?: string): Promise<string> {
  if (configured) return configured;
  await db
    .insertInto('meta')
    .values({ name: 'file_url_secret', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('meta').select('value').where('name', '=', 'file_url_secret').executeTakeFirstOrThrow();
  return row.value;
}
