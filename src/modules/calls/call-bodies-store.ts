import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { blobKey, type BlobStore } from '../../blobs/blob-store.ts';
import type { BodyCapture, StoredBodies } from './call-bodies.ts';

// A call's captured bodies in the result store: one JSON object per call, written after the call
// has ended and deleted with its call log row. The object's key is made from the call id plus a
// random part (a caller may send the same request id twice: each call's row names its own object)
// and carries an expiry a day past the row's, so an object whose row went without it (a process
// that died between the two deletes, a row never written) is removed by the result files' sweeper.

const DAY_SECONDS = 86_400;
/** Objects being written at once, past which a call's bodies are dropped (a slow store must not fill memory). */
const MAX_WRITING = 256;
/** Deletes the sweeper sends at once. */
const DELETES_AT_ONCE = 16;

export function bodiesKey(callId: string, timeMs: number, days: number): string {
  const expiresAt = Math.floor(timeMs / 1000) + (days + 1) * DAY_SECONDS;
  return blobKey(expiresAt, `call-${callId.replace(/[^A-Za-z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`, 'json');
}

export class BodiesStore {
  private writing = new Set<Promise<void>>();
  private failed = 0;

  constructor(
    private readonly store: BlobStore,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly days: number,
  ) {}

  /**
   * Stores the bodies, then hands back the key they are under, or null when they were not stored
   * (the store failed, or too many writes are waiting): the call log row is written either way.
   */
  write(callId: string, timeMs: number, capture: BodyCapture, then: (key: string | null) => void): void {
    if (this.writing.size >= MAX_WRITING) {
      this.fail(callId, new Error('too many call bodies being stored at once'));
      then(null);
      return;
    }
    const key = bodiesKey(callId, timeMs, this.days);
    const task = (async () => {
      let stored: string | null = null;
      try {
        // Started from the response's close: the work of serialising is done a turn later.
        await null;
        await this.store.put(key, Buffer.from(JSON.stringify(capture.finish())), { contentType: 'application/json' });
        stored = key;
      } catch (err) {
        this.fail(callId, err);
      }
      then(stored);
    })();
    this.writing.add(task);
    void task.finally(() => this.writing.delete(task));
  }

  private fail(callId: string, err: unknown): void {
    this.failed++;
    this.logger.warn({ err, call: callId, failed: this.failed }, 'call bodies not stored');
  }

  /** The stored bodies, or undefined when the object is gone (swept, or never written). */
  async read(key: string): Promise<StoredBodies | undefined> {
    const found = await this.store.get(key);
    if (!found) return undefined;
    const parts: Buffer[] = [];
    for await (const part of found.body) parts.push(part as Buffer);
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as StoredBodies;
  }

  /** Deletes the objects of swept rows; one that is already gone is no error. */
  async delete(keys: string[]): Promise<void> {
    for (let at = 0; at < keys.length; at += DELETES_AT_ONCE) {
      await Promise.all(
        keys.slice(at, at + DELETES_AT_ONCE).map((key) => this.store.delete(key).catch((err) => this.logger.warn({ err, key }, 'call bodies not deleted; the file sweeper removes them at their expiry'))),
      );
    }
  }

  /** Every write started has ended. */
  async drain(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }
}
