import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// Reads a multipart/form-data request as it arrives and keeps only each file's size and sha256: a
// fake upstream that receives hundreds of megabytes of references without holding them.

export interface DigestedPart {
  field: string;
  filename?: string;
  size: number;
  sha256: string;
  /** Text fields only (parts without a filename), up to 1 KB. */
  text?: string;
}

export async function digestMultipart(req: IncomingMessage): Promise<DigestedPart[]> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(req.headers['content-type'] ?? '');
  if (!boundary) throw new Error('no multipart boundary');
  const delimiter = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}`);
  const parts: DigestedPart[] = [];
  let state: 'preamble' | 'after' | 'headers' | 'body' | 'done' = 'preamble';
  // The body's first delimiter has no CRLF before it.
  let buf: Buffer = Buffer.from('\r\n');
  let part: { meta: DigestedPart; hash: Hash; text: Buffer[] } | undefined;
  const feed = (bytes: Buffer) => {
    if (!part || bytes.length === 0) return;
    part.meta.size += bytes.length;
    part.hash.update(bytes);
    if (part.meta.filename === undefined && part.meta.size <= 1024) part.text.push(bytes);
  };
  const close = () => {
    if (!part) return;
    part.meta.sha256 = part.hash.digest('hex');
    if (part.meta.filename === undefined) part.meta.text = Buffer.concat(part.text).toString();
    parts.push(part.meta);
    part = undefined;
  };
  for await (const chunk of req) {
    buf = Buffer.concat([buf, chunk as Buffer]);
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at < 0) {
          const keep = Math.max(0, buf.length - delimiter.length);
          if (state === 'body') feed(buf.subarray(0, keep));
          buf = buf.subarray(keep);
          break;
        }
        if (state === 'body') feed(buf.subarray(0, at));
        close();
        buf = buf.subarray(at + delimiter.length);
        state = 'after';
      }
      if (state === 'after') {
        if (buf.length < 2) break;
        state = buf.subarray(0, 2).toString() === '--' ? 'done' : 'headers';
        buf = buf.subarray(2);
      }
      if (state === 'headers') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = buf.subarray(0, end).toString();
        buf = buf.subarray(end + 4);
        const field = /name="([^"]*)"/.exec(head)?.[1] ?? '';
        const filename = /filename="([^"]*)"/.exec(head)?.[1];
        part = { meta: { field, filename, size: 0, sha256: '' }, hash: createHash('sha256'), text: [] };
        state = 'body';
        continue;
      }
      if (state === 'done') {
        buf = Buffer.alloc(0);
        break;
      }
    }
  }
  return parts;
}
