import { UpstreamRejected } from '../core/task-provider.ts';

// Every upstream answer that is read whole goes through one reader with a size cap and a total
// deadline: an upstream that sends without end, or trickles a byte at a time under the idle
// timeouts of the connection, is cut off and its call fails, instead of filling the process's
// memory or holding a worker. The cap is the process's (UPSTREAM_MAX_ANSWER_BYTES): big enough for
// base64 images, far below what would hurt.

/** The default cap; an answer with a few 4K base64 images is well below it. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const caps = { maxBytes: DEFAULT_MAX_ANSWER_BYTES };

/** Sets the process's cap on an answer read whole (from the configuration, at start). */
export function setMaxAnswerBytes(maxBytes: number): void {
  caps.maxBytes = maxBytes;
}

/** The process's cap on an answer read whole. */
export const maxAnswerBytes = (): number => caps.maxBytes;

/**
 * An upstream answer cut off: larger than the cap, or not over within its deadline. The upstream
 * answered, so the task fails here (its hold is refunded) rather than being retried on it.
 */
export class UpstreamAnswerCut extends UpstreamRejected {
  constructor(readonly reason: 'too_large' | 'too_slow', limit: number) {
    super('upstream_error', reason === 'too_large' ? `The upstream's answer was over ${limit} bytes` : `The upstream's answer did not end within ${limit} ms`);
  }
}

export interface ReadLimits {
  /** Defaults to the process's cap. */
  maxBytes?: number;
  /** From the start of the read to its last byte. */
  deadlineMs: number;
}

/** A body read once: a Node Readable, undici's body, or any async iterable of chunks. */
export type AnswerBody = AsyncIterable<Buffer | string> & { destroy?(error?: Error): unknown };

/**
 * The whole body, or UpstreamAnswerCut once it passes `maxBytes` or `deadlineMs`; the body is then
 * destroyed (its connection closed), so nothing more of it is received.
 */
export async function readBounded(body: AnswerBody, limits: ReadLimits): Promise<Buffer> {
  const maxBytes = limits.maxBytes ?? caps.maxBytes;
  const iterator = body[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamAnswerCut('too_slow', limits.deadlineMs)), limits.deadlineMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), late]);
      if (next.done) break;
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      size += chunk.length;
      if (size > maxBytes) throw new UpstreamAnswerCut('too_large', maxBytes);
      chunks.push(chunk);
    }
  } catch (err) {
    stop(body, iterator);
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** The whole body as text, under the same limits. */
export async function readBoundedText(body: AnswerBody, limits: ReadLimits): Promise<string> {
  return (await readBounded(body, limits)).toString('utf8');
}

function stop(body: AnswerBody, iterator: AsyncIterator<unknown>): void {
  if (typeof body.destroy === 'function') body.destroy();
  else void Promise.resolve(iterator.return?.()).catch(() => undefined);
}
