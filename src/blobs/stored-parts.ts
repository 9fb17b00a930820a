import { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { blobKey, BlobTooLarge, type BlobInfo, type BlobStore } from './blob-store.ts';
import { claimedKind, contentTypeOf, isKind, SNIFF_BYTES, sniffExtension, type MediaKind } from '../lib/content-types.ts';

// Puts a result file into the store under `<expiry>-<name>.<ext>`, the extension (and so the
// content type) read from the file's first bytes. Upstream URLs are streamed straight into the
// store: never held whole in memory, cut off past `maxBytes`, retried on 5xx and connection errors.
// A file must be what it stands as: an image's bytes an image (and so on), and a file whose header
// names a kind of media must be that kind; anything else (an HTML error page labelled image/png) is
// refused before it is stored, and its task fails.

export interface StoreTarget {
  store: BlobStore;
  expiresAt: number;
  /** [A-Za-z0-9_-]: unique per task and part, so a retry writes the same key again. */
  name: string;
  maxBytes: number;
  /** What the file stands as in its result; its bytes must be one. */
  kind?: MediaKind;
}

export interface DownloadOptions {
  timeoutMs: number;
  retryDelaysMs: number[];
  dispatcher?: Dispatcher;
}

/** A download that will not succeed (after its retries, or a 4xx, or too large): the task fails. */
export class DownloadFailed extends Error {}

/** The file's bytes are not the media it stands as. */
export class NotTheClaimedMedia extends DownloadFailed {}

/** The extension the bytes sniff as, once they are found to be what the target and `declared` say. */
function checkedExtension(target: StoreTarget, head: Buffer, declared?: string): string {
  const extension = sniffExtension(head);
  const claimed = claimedKind(declared);
  for (const kind of [target.kind, claimed]) {
    if (kind && !isKind(extension, kind)) {
      const what = extension === 'bin' ? 'not a known media format' : contentTypeOf(extension);
      throw new NotTheClaimedMedia(`the upstream's file is not ${kind === 'audio' ? 'audio' : `an ${kind}`} (its bytes are ${what}${declared ? `, labelled ${declared.slice(0, 80)}` : ''})`);
    }
  }
  return extension;
}

/** The first bytes of a stream, and a stream of all its bytes (those first ones included). */
export async function peek(body: Readable, bytes = SNIFF_BYTES): Promise<{ head: Buffer; stream: Readable }> {
  const chunks: Buffer[] = [];
  let length = 0;
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(chunks);
  async function* all() {
    if (head.length > 0) yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const stream = Readable.from(all(), { objectMode: false });
  stream.once('close', () => void iterator.return?.());
  return { head, stream };
}

export async function storeBytes(target: StoreTarget, bytes: Buffer): Promise<BlobInfo> {
  const extension = checkedExtension(target, bytes.subarray(0, SNIFF_BYTES));
  const key = blobKey(target.expiresAt, target.name, extension);
  return target.store.put(key, bytes, { contentType: contentTypeOf(extension), maxBytes: target.maxBytes });
}

/** `declared`: the Content-Type the file came with, if any. */
export async function storeStream(target: StoreTarget, body: Readable, declared?: string): Promise<BlobInfo> {
  const { head, stream } = await peek(body);
  const extension = checkedExtension(target, head, declared);
  const key = blobKey(target.expiresAt, target.name, extension);
  return target.store.put(key, stream, { contentType: contentTypeOf(extension), maxBytes: target.maxBytes });
}

class Retryable extends Error {}

// The task's message says what failed by its code only: a connection error's text names the host.
const reason = (err: unknown) => (typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'connection error');

async function downloadOnce(target: StoreTarget, url: string, options: DownloadOptions): Promise<BlobInfo> {
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, dispatcher: options.dispatcher });
  } catch (err) {
    throw new Retryable(`could not fetch the upstream file (${reason(err)})`);
  }
  const { statusCode, headers, body } = response;
  if (statusCode >= 500 || statusCode === 429) {
    await body.dump().catch(() => {});
    throw new Retryable(`the upstream file answered ${statusCode}`);
  }
  if (statusCode !== 200) {
    await body.dump().catch(() => {});
    throw new DownloadFailed(`the upstream file answered ${statusCode}`);
  }
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > target.maxBytes) {
    body.destroy();
    throw new DownloadFailed(`the upstream file is larger than ${target.maxBytes} bytes`);
  }
  try {
    return await storeStream(target, body, typeof headers['content-type'] === 'string' ? headers['content-type'] : undefined);
  } catch (err) {
    body.destroy();
    if (err instanceof DownloadFailed) throw err;
    if (err instanceof BlobTooLarge) throw new DownloadFailed(`the upstream file is larger than ${target.maxBytes} bytes`);
    // A cut connection or a stalled body: the whole file is fetched again.
    throw new Retryable(`the upstream file could not be read (${reason(err)})`);
  }
}

/** Downloads `url` into the store, retrying 5xx and connection errors; DownloadFailed when it cannot. */
export async function storeDownload(target: StoreTarget, url: string, options: DownloadOptions): Promise<BlobInfo> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await downloadOnce(target, url, options);
    } catch (err) {
      if (!(err instanceof Retryable)) throw err;
      const delay = options.retryDelaysMs[attempt];
      if (delay === undefined) throw new DownloadFailed(`${err.message} (after ${attempt + 1} attempts)`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
