import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { blobKey, BlobTooLarge, type BlobStore } from '../src/blobs/blob-store.ts';
import { LocalBlobStore } from '../src/blobs/local-store.ts';
import { S3BlobStore } from '../src/blobs/s3-store.ts';
import { loadConfig } from '../src/config.ts';
import { s3ServerForTests } from './support/s3-server.ts';

// One suite of cases, run against both stores: the local directory and S3 (a real S3-protocol
// server started here). What a store promises: whole objects or none, ranges, and sweeping by expiry
// that several processes may run at once.

const s3 = await s3ServerForTests();
const localDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-blobs-'));
afterAll(async () => {
  await s3?.stop();
  fs.rmSync(localDir, { recursive: true, force: true });
});

const stores: [string, () => BlobStore][] = [
  ['local directory', () => new LocalBlobStore(localDir)],
  ['S3', () => new S3BlobStore(loadConfig({ ...s3!.env(`run-${randomBytes(3).toString('hex')}`) }).files.s3!)],
];

const now = () => Math.floor(Date.now() / 1000);
const key = (expiresAt = now() + 3600, ext = 'bin') => blobKey(expiresAt, `k${randomBytes(6).toString('hex')}`, ext);
const read = async (body: Readable) => Buffer.concat(await body.toArray());

/** A body that sends `before` bytes, then fails as a cut upstream connection does. */
function cutStream(before: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(randomBytes(before));
      } else {
        setTimeout(() => this.destroy(new Error('connection reset by upstream')), 20);
      }
    },
  });
}

describe.each(stores)('BlobStore: %s', (name, make) => {
  const skip = name === 'S3' && !s3;

  it.skipIf(skip)('put, get, a range, head and delete', async () => {
    const store = make();
    const bytes = randomBytes(100_000);
    const k = key(undefined, 'png');
    expect(await store.put(k, Readable.from([bytes.subarray(0, 40_000), bytes.subarray(40_000)]), { contentType: 'image/png' })).toEqual({
      key: k,
      size: 100_000,
      contentType: 'image/png',
    });
    const whole = (await store.get(k))!;
    expect(whole.info).toEqual({ key: k, size: 100_000, contentType: 'image/png' });
    expect((await read(whole.body)).equals(bytes)).toBe(true);
    const part = (await store.get(k, { start: 10, end: 19 }))!;
    expect(part.info.size).toBe(100_000);
    expect((await read(part.body)).equals(bytes.subarray(10, 20))).toBe(true);
    expect(await store.head(k)).toEqual({ key: k, size: 100_000, contentType: 'image/png' });
    await store.delete(k);
    expect(await store.head(k)).toBeUndefined();
    expect(await store.get(k)).toBeUndefined();
    await store.delete(k); // deleting what is gone is no error
    await store.close?.();
  });

  it.skipIf(skip)('a body cut mid-write leaves nothing readable under the key', async () => {
    const store = make();
    const k = key();
    await expect(store.put(k, cutStream(64 * 1024), { contentType: 'application/octet-stream' })).rejects.toThrow(/connection reset/);
    expect(await store.head(k)).toBeUndefined();
    expect(await store.get(k)).toBeUndefined();
    if (name === 'local directory') expect(fs.readdirSync(path.join(localDir, '.partial'))).toEqual([]);
    await store.close?.();
  });

  it.skipIf(skip)('a body over maxBytes is refused and nothing is stored', async () => {
    const store = make();
    const k = key();
    await expect(store.put(k, Readable.from([randomBytes(600), randomBytes(600)]), { contentType: 'application/octet-stream', maxBytes: 1000 })).rejects.toBeInstanceOf(
      BlobTooLarge,
    );
    expect(await store.head(k)).toBeUndefined();
    await store.close?.();
  });

  it.skipIf(skip)('sweeping deletes what expired and keeps the rest; concurrent sweepers are safe', async () => {
    const store = make();
    const t = now();
    const expired = [key(t - 100), key(t - 50), key(t - 1)];
    const valid = [key(t + 1000), key(t + 5000)];
    for (const k of [...expired, ...valid]) await store.put(k, randomBytes(10), { contentType: 'application/octet-stream' });
    const counts = await Promise.all([store.sweep(t), store.sweep(t), make().sweep(t)]);
    for (const count of counts) expect(count).toBeGreaterThanOrEqual(0);
    for (const k of expired) expect(await store.head(k)).toBeUndefined();
    for (const k of valid) expect(await store.head(k)).toMatchObject({ size: 10 });
    expect(await store.sweep(t)).toBe(0);
    await store.close?.();
  });

  it.skipIf(skip)('a large body is stored whole, in parts (S3 multipart)', async () => {
    const store = make();
    const k = key();
    const chunk = randomBytes(1024 * 1024);
    const total = 20;
    let sent = 0;
    const body = new Readable({ read() { this.push(sent++ < total ? chunk : null); } });
    expect((await store.put(k, body, { contentType: 'application/octet-stream' })).size).toBe(total * chunk.length);
    const tail = (await store.get(k, { start: total * chunk.length - 5, end: total * chunk.length - 1 }))!;
    expect((await read(tail.body)).equals(chunk.subarray(-5))).toBe(true);
    await store.close?.();
  }, 30_000);
});
