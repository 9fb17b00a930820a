import type { ServerResponse } from 'node:http';

// Opt-in body capture (a key's `log_bodies`): the request body as received and the answer as sent
// (a stream's bytes as they went out), each cut at CALL_BODY_MAX_BYTES, for the operator and the
// holder to settle a dispute. No header is kept; a field named like a credential and the caller's
// own key string anywhere are redacted before anything is stored. A key without it never gets here.

export const REDACTED = '[redacted]';

/** Field names that carry credentials, whatever the body's format. */
const SECRET_FIELD = /(?:^|[-_])(?:authorization|api[-_]?key|apikey|secret|password|passwd|token|cookie)$/i;
/** The same fields written in JSON text, their value up to its closing quote (or the cut). */
const SECRET_FIELD_TEXT = /("(?:[^"\\]*[-_])?(?:authorization|api[-_]?key|apikey|secret|password|passwd|token|cookie)"\s*:\s*)("(?:[^"\\]|\\.)*"?|[\w.+-]+)/gi;
/** Past the cap a little more is read, so a key or field the cut would split is still seen whole. */
const SLACK = 512;

export interface StoredBodies {
  request: string;
  response: string;
  truncated: { request: boolean; response: boolean };
}

/** What a Buffer becomes in JSON.stringify: its size, not its bytes (a multipart upload's file). */
function replacer(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_FIELD.test(key)) return REDACTED;
  if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data)) {
    return `[${(value as { data: unknown[] }).data.length} bytes]`;
  }
  return value;
}

/** A key's first characters past which a run of them is taken for the key: a model's echo may stop inside it. */
const KEY_HEAD = 16;

/** Every run of `text` that starts with the secret's head and goes on as the secret does, redacted. */
function redactSecret(text: string, secret: string): string {
  if (!secret) return text;
  const head = secret.slice(0, Math.min(KEY_HEAD, secret.length));
  let at = text.indexOf(head);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    let end = at + head.length;
    while (end < text.length && end - at < secret.length && text[end] === secret[end - at]) end++;
    out += text.slice(from, at) + REDACTED;
    from = end;
    at = text.indexOf(head, end);
  }
  return out + text.slice(from);
}

function redactText(text: string, secret: string): string {
  return redactSecret(text.replace(SECRET_FIELD_TEXT, `$1"${REDACTED}"`), secret);
}

/** The first `max` bytes of `text` (a character the cut splits is dropped). */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max / 3 || Buffer.byteLength(text) <= max) return { text, truncated: false };
  return { text: Buffer.from(text).subarray(0, max).toString('utf8').replace(/\uFFFD$/, ''), truncated: true };
}

export class BodyCapture {
  private readonly request: string;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private over = false;

  constructor(
    body: unknown,
    private readonly secret: string,
    private readonly max: number,
  ) {
    let text: string;
    if (body === undefined || body === null) text = '';
    else if (typeof body === 'string') text = body;
    else if (Buffer.isBuffer(body)) text = body.toString('utf8');
    else {
      try {
        text = JSON.stringify(body, replacer) ?? '';
      } catch {
        text = '';
      }
    }
    // The key string is redacted before the cut, so the cut cannot leave a part of it behind.
    this.request = redactText(text, secret);
  }

  /** Taps the response: every byte written to it is also kept, up to the cap. */
  tap(raw: ServerResponse): void {
    const write = raw.write;
    const end = raw.end;
    const capture = this;
    // An end() that writes its last chunk through write() (as some responses do) is taken once.
    let ending = false;
    raw.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      if (!ending) capture.take(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    raw.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') capture.take(chunk, rest[0]);
      ending = true;
      try {
        return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
      } finally {
        ending = false;
      }
    } as ServerResponse['end'];
  }

  private take(chunk: unknown, encoding: unknown): void {
    if (chunk === undefined || chunk === null || this.over) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : undefined;
    if (!bytes) return;
    const room = this.max + this.secret.length + SLACK - this.size;
    if (bytes.length >= room) this.over = true;
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes;
    // Copied: a caller may reuse the buffer it wrote once the write is done.
    this.chunks.push(Buffer.from(kept));
    this.size += kept.length;
  }

  /** Both bodies as stored: redacted, then cut. */
  finish(): StoredBodies {
    const request = cut(this.request, this.max);
    const response = cut(redactText(Buffer.concat(this.chunks).toString('utf8'), this.secret), this.max);
    return { request: request.text, response: response.text, truncated: { request: request.truncated, response: response.truncated || this.over } };
  }
}
