import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendEndlessJson, type EndlessCount } from './endless-answer.ts';

// Another gateway as a relay channel sees it, reduced to what the relay uses: a submit, a task record
// that is completed at once, and the result file behind the record's link. Tests set how the file
// behaves (5xx first, slow, its bytes) and count its downloads, and how its task records read:
// completed, failed (with its own links and host in them), or an answer that never ends.

export interface FakeFile {
  bytes: Buffer;
  /** Answer 500 to this many downloads first. */
  failFirst?: number;
  /** Spread the body over this long. */
  slowMs?: number;
  /** The content type the upstream claims (the gateway must not trust it). */
  contentType?: string;
}

export interface FakeTaskUpstream {
  url: string;
  file: FakeFile;
  /** 'failed': the record fails, naming the upstream's host and a signed link of its own. 'endless': the record's JSON never ends. */
  record: 'completed' | 'failed' | 'endless';
  /** Fields the upstream adds to its completed result and to its file group. */
  extra: { result?: Record<string, unknown>; group?: Record<string, unknown> };
  /** Bytes of endless answers sent so far. */
  endless: EndlessCount;
  downloads: number;
  submits: number;
  close(): Promise<void>;
}

export async function startFakeTaskUpstream(file: FakeFile): Promise<FakeTaskUpstream> {
  const upstream = { file, downloads: 0, submits: 0, record: 'completed', extra: {}, endless: { sent: 0 } } as FakeTaskUpstream;
  const server = http.createServer((req, res) => {
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'POST' && req.url === '/v1/images/generations') {
      req.resume();
      return json(200, { code: 200, data: [{ status: 'submitted', task_id: `up_${++upstream.submits}` }] });
    }
    if (req.method === 'GET' && req.url?.startsWith('/v1/tasks/')) {
      const link = `${upstream.url}/file/${req.url.slice(10)}.png?signature=upstream-private`;
      if (upstream.record === 'endless') return sendEndlessJson(res, '{"code":200,"data":{"status":"completed","result":{"images":[{"url":["', '"]}]}}}', upstream.endless);
      if (upstream.record === 'failed') {
        const error = { code: 'upstream_error', message: `The file store at ${upstream.url} refused ${link}` };
        return json(200, { code: 200, data: { status: 'failed', progress: 100, error, result: { images: [{ url: [link], expires_at: Math.floor(Date.now() / 1000) + 60 }] } } });
      }
      const result = { images: [{ url: [link], expires_at: Math.floor(Date.now() / 1000) + 60, ...upstream.extra.group }], ...upstream.extra.result };
      return json(200, { code: 200, data: { status: 'completed', progress: 100, result } });
    }
    if (req.method === 'GET' && req.url?.startsWith('/file/')) {
      const n = ++upstream.downloads;
      const f = upstream.file;
      if (n <= (f.failFirst ?? 0)) return json(500, { error: 'busy' });
      res.writeHead(200, { 'content-type': f.contentType ?? 'text/plain', 'content-length': f.bytes.length });
      if (!f.slowMs) return res.end(f.bytes);
      const pieces = 10;
      const size = Math.ceil(f.bytes.length / pieces);
      let i = 0;
      const timer = setInterval(() => {
        res.write(f.bytes.subarray(i * size, (i + 1) * size));
        if (++i >= pieces) {
          clearInterval(timer);
          res.end();
        }
      }, f.slowMs / pieces);
      res.once('close', () => clearInterval(timer));
      return;
    }
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  upstream.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return upstream;
}
