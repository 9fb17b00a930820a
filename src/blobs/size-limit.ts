import { Transform } from 'node:stream';
import { BlobTooLarge } from './blob-store.ts';

/** Passes bytes through until more than `maxBytes` went by, then fails the stream. */
export function sizeLimit(maxBytes = Number.MAX_SAFE_INTEGER): Transform & { bytes(): number } {
  let seen = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) callback(new BlobTooLarge(maxBytes));
      else callback(null, chunk);
    },
  });
  return Object.assign(transform, { bytes: () => seen });
}
