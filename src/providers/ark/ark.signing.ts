import { createHash, createHmac } from 'node:crypto';

// The Volcengine / BytePlus OpenAPI request signature ("HMAC-SHA256", signature v4 style), as the
// vendor's own SDK computes it (volcengine-python-sdk, volcenginesdkcore/signv4.py): signed headers
// are Content-Type, Host and every X-* header; the key is derived from the secret key without a prefix
// (date -> region -> service -> "request"); the scope is <yyyymmdd>/<region>/<service>/request.
// test/ark-avatar.test.ts checks it against a signature computed by that SDK file itself.

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
}

export interface SignInput {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** For tests: the moment to sign at. */
  now?: Date;
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding, as Python's quote(safe='-_.~'). */
const encode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(url: URL): string {
  const pairs = [...url.searchParams.entries()].map(([k, v]) => [encode(k), encode(v)] as const);
  pairs.sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** X-Date form: 20240101T120000Z. */
export const xDate = (now: Date) => now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

/** The headers to send: the input's, plus Host, X-Date, X-Content-Sha256 and Authorization. */
export function signRequest(credentials: Credentials, input: SignInput): Record<string, string> {
  const date = xDate(input.now ?? new Date());
  const bodyHash = sha256Hex(input.body);
  // As the SDK does: the Host header drops a port of 80 or 443.
  const host = input.url.host.replace(/:(80|443)$/, '');
  const headers: Record<string, string> = { ...input.headers, Host: host, 'X-Date': date, 'X-Content-Sha256': bodyHash };
  const signed = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type' || lower === 'content-md5' || lower === 'host' || lower.startsWith('x-')) signed.set(lower, value.trim());
  }
  const names = [...signed.keys()].sort();
  const canonicalHeaders = names.map((name) => `${name}:${signed.get(name)}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [input.method.toUpperCase(), input.url.pathname || '/', canonicalQuery(input.url), canonicalHeaders, signedHeaders, bodyHash].join('\n');
  const scope = `${date.slice(0, 8)}/${credentials.region}/${credentials.service}/request`;
  const stringToSign = ['HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  const kDate = hmac(credentials.secretAccessKey, date.slice(0, 8));
  const key = hmac(hmac(hmac(kDate, credentials.region), credentials.service), 'request');
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.Authorization = `HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
