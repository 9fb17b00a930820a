import net from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { upstreamResponse } from '../upstream-client.ts';
import { contentTypeOf, sniffExtension, SNIFF_BYTES } from '../../lib/content-types.ts';
import { checkAddress } from '../../lib/net/address-rules.ts';
import { abortAfter } from '../../lib/abort-after.ts';
import type { DownloadSlots } from '../reference-slots.ts';
import type { HeldBytes, ReferenceStore } from '../reference-store.ts';
import { ReferencesBusy, UpstreamRejected } from '../../core/task-provider.ts';

// Reference images and masks that an upstream needs as bytes (OpenAI's edits take files, not URLs).
// A caller's URL is fetched through the dispatcher that applies the callback address rules; a
// `data:` URL is decoded. Each image up to 20 MB, all of a task's together up to 256 MB. The bytes
// wait in the process's reference store (memory within its budget, else disk) until released, and a
// download ends at its own deadline, when it moves slower than the minimum rate, or when the task's
// signal aborts.

export const REFERENCE_MAX_BYTES = 20 * 1024 * 1024;
export const REFERENCES_TOTAL_MAX_BYTES = 256 * 1024 * 1024;

export interface ReferenceFile {
  size: number;
  /** Read from the bytes, never from what the serving host said. */
  contentType: string;
  extension: string;
  blob(): Promise<Blob>;
  stream(): Readable;
}

/** A task's references, held until release() (always called, also when the upstream call failed). */
export interface References {
  files: ReferenceFile[];
  release(): Promise<void>;
}

/** The process's rules for callers' reference downloads (one instance per process). */
export interface FetchLimits {
  store: ReferenceStore;
  slots: DownloadSlots;
  /** Resolves names and connects only to addresses the rules allow. */
  dispatcher?: Dispatcher;
  /**
   * FETCH_ALLOW_PRIVATE. An address literal in the URL needs no lookup, so the dispatcher never sees
   * it: when this is given, such a literal is checked here against the same rules.
   */
  allowPrivate?: boolean;
  /** One download's whole time. */
  timeoutMs: number;
  minBytesPerSecond: number;
  windowMs: number;
  /** How soon a task that found no free download slot asks again. */
  busyRetryMs: number;
}

/** Whose references these are: the account's share of slots, and the task's deadline. */
export interface Fetcher {
  account: string;
  signal?: AbortSignal;
}

/** A reference that cannot be used fails the task: another channel would not fetch it any better. */
const refused = (field: string, why: string) => new UpstreamRejected('task_failed', `${field} could not be used: ${why}`);

async function decodeDataUrl(field: string, url: string, limits: FetchLimits): Promise<HeldBytes> {
  const comma = url.indexOf(',');
  if (comma < 0 || !/;base64$/i.test(url.slice(0, comma))) throw refused(field, 'only base64 data URLs are accepted');
  const collector = limits.store.collector();
  await collector.write(Buffer.from(url.slice(comma + 1), 'base64'));
  return collector.finish();
}

async function download(field: string, url: string, room: number, limits: FetchLimits, signal: AbortSignal | undefined): Promise<HeldBytes> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (limits.allowPrivate !== undefined && net.isIP(host)) {
    const verdict = checkAddress(host, limits.allowPrivate);
    if (!verdict.ok) throw refused(field, `refused: ${verdict.reason}`);
  }
  const deadline = abortAfter(limits.timeoutMs, signal);
  let tooSlow = false;
  const limit = Math.min(REFERENCE_MAX_BYTES, room);
  const tooLarge = () => refused(field, limit < REFERENCE_MAX_BYTES ? 'all reference images together exceed 256 MB' : 'over 20 MB');
  // A host that sends a byte now and then would hold its slot until the deadline: each window must move enough.
  let moved = 0;
  const least = (limits.minBytesPerSecond * limits.windowMs) / 1000;
  const watch = setInterval(() => {
    if (moved < least && !tooSlow) {
      tooSlow = true;
      deadline.abortNow();
    }
    moved = 0;
  }, limits.windowMs);
  const collector = limits.store.collector();
  try {
    const response = await upstreamResponse({ url, dispatcher: limits.dispatcher, signal: deadline.signal, timeoutMs: limits.timeoutMs });
    if (response.statusCode !== 200) {
      response.body.destroy();
      throw refused(field, `its host answered ${response.statusCode}`);
    }
    if (Number(response.headers['content-length']) > limit) {
      response.body.destroy();
      throw tooLarge();
    }
    for await (const chunk of response.body) {
      moved += (chunk as Buffer).length;
      if (collector.size + (chunk as Buffer).length > limit) {
        response.body.destroy();
        throw tooLarge();
      }
      await collector.write(chunk as Buffer);
    }
    return await collector.finish();
  } catch (err) {
    await collector.discard();
    if (err instanceof UpstreamRejected) throw err;
    if (tooSlow) throw refused(field, `it arrived slower than ${limits.minBytesPerSecond} bytes/s`);
    if (deadline.timedOut()) throw refused(field, `it did not arrive within ${limits.timeoutMs / 1000} s`);
    if (signal?.aborted) throw refused(field, 'the task ended before it arrived');
    throw refused(field, (err as Error).message);
  } finally {
    clearInterval(watch);
    deadline.done();
  }
}

/**
 * Fetches each `[field, url]` in order, within the per-image and total limits. Throws ReferencesBusy
 * when the process (or this account) already runs its share of downloads.
 */
export async function fetchReferences(urls: [field: string, url: string][], limits: FetchLimits, fetcher: Fetcher): Promise<References> {
  const remote = urls.some(([, url]) => !url.startsWith('data:'));
  const giveSlot = remote ? limits.slots.tryTake(fetcher.account) : () => {};
  if (!giveSlot) throw new ReferencesBusy(limits.busyRetryMs);
  const held: HeldBytes[] = [];
  const release = async () => {
    await Promise.all(held.splice(0).map((h) => h.release()));
  };
  const files: ReferenceFile[] = [];
  let total = 0;
  try {
    for (const [field, url] of urls) {
      const room = REFERENCES_TOTAL_MAX_BYTES - total;
      const bytes = url.startsWith('data:') ? await decodeDataUrl(field, url, limits) : await download(field, url, room, limits, fetcher.signal);
      held.push(bytes);
      if (bytes.size > REFERENCE_MAX_BYTES) throw refused(field, 'over 20 MB');
      total += bytes.size;
      if (total > REFERENCES_TOTAL_MAX_BYTES) throw refused(field, 'all reference images together exceed 256 MB');
      const extension = sniffExtension(bytes.head.subarray(0, SNIFF_BYTES));
      const contentType = contentTypeOf(extension);
      files.push({ size: bytes.size, extension, contentType, blob: () => bytes.blob(contentType), stream: () => bytes.stream() });
    }
  } catch (err) {
    await release();
    throw err;
  } finally {
    giveSlot();
  }
  return { files, release };
}
