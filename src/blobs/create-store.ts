import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { LocalBlobStore } from './local-store.ts';
import { S3BlobStore } from './s3-store.ts';

/** S3 when FILES_STORE names a bucket (its SDK loads on first use), else the local FILES_DIR. */
export function createBlobStore(config: Readonly<Config>): BlobStore {
  if (config.files.s3) return new S3BlobStore(config.files.s3);
  try {
    return new LocalBlobStore(config.filesDir);
  } catch (err) {
    // At start: one line naming the variable, as for the database and Redis.
    throw new Error(`FILES_DIR: cannot use ${config.filesDir} (${(err as Error).message})`);
  }
}
