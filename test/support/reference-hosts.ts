import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { digestMultipart, type DigestedPart } from './multipart-digest.ts';

// Local servers for reference-download tests: a host of large generated images (made as they are
// sent, never held), a host that trickles, and an OpenAI Images fake that keeps only digests.

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MB = 1024 * 1024;
const base = randomBytes(MB);

/** The 1 MB pieces of generated image `name`: a PNG signature, then bytes unique to the name. */
function* pieces(name: string, megabytes: number): Generator<Buffer> {
  for (let i = 0; i < megabytes; i++) {
    const mark = Buffer.from(`${name}:${i}:`.padEnd(32, '.'));
    yield Buffer.concat([i === 0 ? PNG_SIGNATURE : Buffer.alloc(0), mark, base.subarray(mark.length + (i === 0 ? 8 : 0))]);
  }
}

export function expectedDigest(name: string, megabytes: number): { size: number; sha256: string } {
  const hash = createHash('sha256');
  for (const piece of pieces(name, megabytes)) hash.update(piece);
  return { size: megabytes * MB, sha256: hash.digest('hex') };
}

async function listen(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

/** Serves `/<name>?mb=<n>` as a generated image of n MB. */
export async function startImageHost() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const megabytes = Number(url.searchParams.get('mb') ?? '1');
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': megabytes * MB });
    Readable.from(pieces(url.pathname.slice(1), megabytes)).pipe(res);
  });
  return listen(server);
}

export interface TrickleConnection {
  openedAt: number;
  closedAt?: number;
}

/** Answers 200 with a large content-length, then sends one byte per `everyMs`; records each connection. */
export async function startTrickleHost(everyMs = 1000) {
  const connections: TrickleConnection[] = [];
  const server = http.createServer((req, res) => {
    const seen: TrickleConnection = { openedAt: Date.now() };
    connections.push(seen);
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': 1_000_000 });
    res.write(PNG_SIGNATURE);
    const timer = setInterval(() => res.write(Buffer.from([0])), everyMs);
    req.socket.once('close', () => {
      clearInterval(timer);
      seen.closedAt = Date.now();
    });
  });
  return { ...(await listen(server)), connections };
}

/** POST /v1/images/edits and /v1/images/generations, answered with one tiny PNG; edits keep their parts' digests. */
export async function startDigestingOpenAI(png: Buffer) {
  const edits: DigestedPart[][] = [];
  let generations = 0;
  const server = http.createServer(async (req, res) => {
    if (req.url === '/v1/images/edits') edits.push(await digestMultipart(req));
    else if (req.url === '/v1/images/generations') {
      generations++;
      for await (const _ of req);
    } else return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ created: 1, data: [{ b64_json: png.toString('base64') }], usage: { input_tokens: 10, output_tokens: 10 } }));
  });
  return { ...(await listen(server)), edits, generations: () => generations };
}
