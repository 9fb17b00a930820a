import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { expiryOfKey, isBlobKey, type BlobInfo, type BlobStore, type ByteSpan, type PutOptions } from './blob-store.ts';
import { sizeLimit } from './size-limit.ts';

// Several machines' store: an S3 bucket (or any server that speaks S3). Uploads go in parts of
// PART_BYTES, at most QUEUE of them in memory at once, so a 2 GB file never sits in memory; an upload
// that fails midway is aborted, and S3 shows an object only once it is complete. The SDK is loaded on
// first use: importing it costs a process start 120-170 ms and ~25 MB (measured alone on this VM),
// and most processes never use S3.

export interface S3StoreOptions {
  bucket: string;
  prefix: string;
  region: string;
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

const PART_BYTES = 5 * 1024 * 1024;
const QUEUE = 2;

/** The SDK's errors: a service exception's name, and the HTTP status in its metadata. */
type S3Failure = { name?: string; $metadata?: { httpStatusCode?: number } } | null | undefined;

const notFound = (err: unknown) => {
  const e = err as S3Failure;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

async function loadSdk() {
  const [s3, storage] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
  return { ...s3, Upload: storage.Upload };
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>;

export class S3BlobStore implements BlobStore {
  private opened?: Promise<{ sdk: Sdk; client: S3Client }>;

  constructor(private readonly options: S3StoreOptions) {}

  private open(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.opened ??= loadSdk().then((sdk) => ({ sdk, client: this.newClient(sdk) }));
    return this.opened;
  }

  private newClient(sdk: Sdk): S3Client {
    const options = this.options;
    return new sdk.S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // Checksums only where S3 requires them: S3-compatible servers differ on the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey(key: string): string {
    if (!isBlobKey(key)) throw new Error(`not a blob key: ${key}`);
    return this.options.prefix + key;
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions): Promise<BlobInfo> {
    const { sdk, client } = await this.open();
    const limit = sizeLimit(options.maxBytes);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    source.once('error', (err) => limit.destroy(err));
    source.pipe(limit);
    const upload = new sdk.Upload({
      client,
      queueSize: QUEUE,
      partSize: PART_BYTES,
      leavePartsOnError: false,
      params: { Bucket: this.options.bucket, Key: this.objectKey(key), Body: limit, ContentType: options.contentType },
    });
    try {
      await upload.done();
    } catch (err) {
      source.destroy();
      throw err;
    }
    return { key, size: limit.bytes(), contentType: options.contentType };
  }

  async get(key: string, span?: ByteSpan): Promise<{ info: BlobInfo; body: Readable } | undefined> {
    const { sdk, client } = await this.open();
    try {
      const out = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key), ...(span ? { Range: `bytes=${span.start}-${span.end}` } : {}) }),
      );
      const total = out.ContentRange ? Number(out.ContentRange.split('/')[1]) : Number(out.ContentLength ?? 0);
      return { info: { key, size: total, contentType: out.ContentType ?? 'application/octet-stream' }, body: out.Body as Readable };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    const { sdk, client } = await this.open();
    try {
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
      return { key, size: Number(out.ContentLength ?? 0), contentType: out.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.open();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
  }

  async sweep(nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
    const { sdk, client } = await this.open();
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.options.prefix, ContinuationToken: token, MaxKeys: 1000 }),
      );
      const expired: string[] = [];
      let reachedValid = false;
      for (const object of page.Contents ?? []) {
        const expiresAt = expiryOfKey(object.Key!.slice(this.options.prefix.length));
        if (expiresAt === undefined) continue;
        // Keys sort by expiry: the first one still valid ends the sweep.
        if (expiresAt >= nowSeconds) {
          reachedValid = true;
          break;
        }
        expired.push(object.Key!);
      }
      if (expired.length > 0) {
        // Deleting an object another sweeper deleted first is no error in S3.
        await client.send(new sdk.DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: expired.map((Key) => ({ Key })), Quiet: true } }));
        removed += expired.length;
      }
      token = reachedValid ? undefined : page.NextContinuationToken;
    } while (token);
    return removed;
  }

  async close(): Promise<void> {
    if (this.opened) (await this.opened.catch(() => undefined))?.client.destroy();
  }
}
