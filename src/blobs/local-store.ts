import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expiryOfKey, extensionOfKey, isBlobKey, type BlobInfo, type BlobStore, type ByteSpan, type PutOptions } from './blob-store.ts';
import { contentTypeOf } from '../lib/content-types.ts';
import { sizeLimit } from './size-limit.ts';

// One machine's store: a flat directory of files named by their keys. A file is written under a
// temporary name in `.partial/` and renamed into place only when every byte is on disk, so a crash
// or a cut upstream never leaves a half file under a real key. The content type is the key's
// extension (the key was made from the bytes' magic numbers).

const PARTIAL = '.partial';
/** Temporary files older than this were left by a process that died mid-write. */
const PARTIAL_MAX_AGE_MS = 24 * 3600 * 1000;

export class LocalBlobStore implements BlobStore {
  private readonly partial: string;

  constructor(private readonly dir: string) {
    this.partial = path.join(dir, PARTIAL);
    fs.mkdirSync(this.partial, { recursive: true });
  }

  private pathOf(key: string): string {
    if (!isBlobKey(key)) throw new Error(`not a blob key: ${key}`);
    return path.join(this.dir, key);
  }

  private info(key: string, size: number): BlobInfo {
    return { key, size, contentType: contentTypeOf(extensionOfKey(key)!) };
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions): Promise<BlobInfo> {
    const target = this.pathOf(key);
    const temp = path.join(this.partial, `${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    const limit = sizeLimit(options.maxBytes);
    try {
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      await pipeline(source, limit, fs.createWriteStream(temp, { flush: true }));
      await fs.promises.rename(temp, target);
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    return this.info(key, limit.bytes());
  }

  async get(key: string, span?: ByteSpan): Promise<{ info: BlobInfo; body: Readable } | undefined> {
    let handle: fs.promises.FileHandle;
    try {
      // Opened first: a sweeper deleting the file now cannot cut a download that has started.
      handle = await fs.promises.open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') return undefined;
      throw err;
    }
    const { size } = await handle.stat();
    const body = handle.createReadStream(span ? { start: span.start, end: span.end } : {});
    return { info: this.info(key, size), body };
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    try {
      return this.info(key, (await fs.promises.stat(this.pathOf(key))).size);
    } catch (err) {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }

  async sweep(nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
    let removed = 0;
    for (const entry of await fs.promises.readdir(this.dir)) {
      const expiresAt = expiryOfKey(entry);
      if (expiresAt !== undefined && expiresAt < nowSeconds) {
        await fs.promises.rm(path.join(this.dir, entry), { force: true });
        removed++;
      }
    }
    const stale = Date.now() - PARTIAL_MAX_AGE_MS;
    for (const entry of await fs.promises.readdir(this.partial)) {
      const file = path.join(this.partial, entry);
      const stat = await fs.promises.stat(file).catch(() => undefined);
      if (stat && stat.mtimeMs < stale) await fs.promises.rm(file, { force: true });
    }
    return removed;
  }
}
