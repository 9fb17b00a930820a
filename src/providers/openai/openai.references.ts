import net from 'node:net';
import { request, type Dispatcher } from 'undici';
import { contentTypeOf, sniffExtension, SNIFF_BYTES } from '../../blobs/content-types.ts';
import { checkAddress } from '../../modules/webhooks/address-rules.ts';
import { UpstreamRejected } from '../types.ts';

// Reference images and masks that an upstream needs as bytes (OpenAI's edits take files, not URLs).
// A caller's URL is fetched through the dispatcher that applies the callback address rules; a
// `data:` URL is decoded. SPEC 8: each image up to 20 MB, all of a task's together up to 256 MB.

export const REFERENCE_MAX_BYTES = 20 * 1024 * 1024;
export const REFERENCES_TOTAL_MAX_BYTES = 256 * 1024 * 1024;

export interface ReferenceFile {
  bytes: Buffer;
  /** Read from the bytes, never from what the serving host said. */
  contentType: string;
  extension: string;
}

export interface FetchLimits {
  /** Resolves names and connects only to addresses the rules allow. */
  dispatcher?: Dispatcher;
  /**
   * FETCH_ALLOW_PRIVATE. An address literal in the URL needs no lookup, so the dispatcher never sees
   * it: when this is given, such a literal is checked here against the same rules.
   */
  allowPrivate?: boolean;
  timeoutMs: number;
}

/** A reference that cannot be used fails the task: another channel would not fetch it any better. */
const refused = (field: string, why: string) => new UpstreamRejected('task_failed', `${field} could not be used: ${why}`);

function decodeDataUrl(field: string, url: string): Buffer {
  const comma = url.indexOf(',');
  if (comma < 0 || !/;base64$/i.test(url.slice(0, comma))) throw refused(field, 'only base64 data URLs are accepted');
  return Buffer.from(url.slice(comma + 1), 'base64');
}

async function download(field: string, url: string, room: number, limits: FetchLimits): Promise<Buffer> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (limits.allowPrivate !== undefined && net.isIP(host)) {
    const verdict = checkAddress(host, limits.allowPrivate);
    if (!verdict.ok) throw refused(field, `refused: ${verdict.reason}`);
  }
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, { dispatcher: limits.dispatcher, headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs });
  } catch (err) {
    throw refused(field, (err as Error).message);
  }
  if (response.statusCode !== 200) {
    await response.body.dump().catch(() => {});
    throw refused(field, `its host answered ${response.statusCode}`);
  }
  const declared = Number(response.headers['content-length']);
  const limit = Math.min(REFERENCE_MAX_BYTES, room);
  const tooLarge = () => refused(field, limit < REFERENCE_MAX_BYTES ? 'all reference images together exceed 256 MB' : 'over 20 MB');
  if (declared > limit) {
    await response.body.dump().catch(() => {});
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      response.body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Fetches each `[field, url]` in order, within the per-image and total limits. */
export async function fetchReferences(urls: [field: string, url: string][], limits: FetchLimits): Promise<ReferenceFile[]> {
  const out: ReferenceFile[] = [];
  let total = 0;
  for (const [field, url] of urls) {
    const room = REFERENCES_TOTAL_MAX_BYTES - total;
    const bytes = url.startsWith('data:') ? decodeDataUrl(field, url) : await download(field, url, room, limits);
    if (bytes.length > REFERENCE_MAX_BYTES) throw refused(field, 'over 20 MB');
    total += bytes.length;
    if (total > REFERENCES_TOTAL_MAX_BYTES) throw refused(field, 'all reference images together exceed 256 MB');
    const extension = sniffExtension(bytes.subarray(0, SNIFF_BYTES));
    out.push({ bytes, extension, contentType: contentTypeOf(extension) });
  }
  return out;
}
