import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A recording reverse proxy between a coding agent and the gateway (test/agents-gateway*.test.ts):
// a real local server that keeps each request as the agent sent it (method, path, headers, parsed
// body) and forwards it byte for byte to the gateway, streaming the answer back. Comparing what it
// recorded with what a vendor fake behind the gateway received shows what the gateway changed.
// It is also the agent's HTTP(S)_PROXY: a request for any other host (an absolute URL or a CONNECT
// tunnel) is refused and its host kept in `outbound`, so a test sees an agent reaching for a vendor.

export interface ProxiedRequest {
  method: string;
  path: string; // with the query
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body, the raw text when not JSON, undefined when empty. */
  body: any;
  /** The gateway's status. */
  status?: number;
}

export interface RecordingProxy {
  url: string; // http://127.0.0.1:port
  requests: ProxiedRequest[];
  outbound: string[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const to = new URL(target);
  const proxy: RecordingProxy = { url: '', requests: [], outbound: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    if (/^https?:\/\//.test(req.url ?? '')) { // a plain-HTTP proxy request for another host
      proxy.outbound.push(new URL(req.url!).host);
      res.writeHead(403).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: any = raw.length ? raw.toString('utf8') : undefined;
      try { if (body !== undefined) body = JSON.parse(body); } catch { /* kept as text */ }
      const rec: ProxiedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      proxy.requests.push(rec);
      const headers = { ...req.headers, host: to.host };
      const out = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
        rec.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', (err) => { if (!res.headersSent) res.writeHead(502).end(String(err)); else res.destroy(); });
      res.on('close', () => { if (!res.writableFinished) out.destroy(); }); // the agent hung up: so does the gateway's caller
      out.end(raw);
    });
  });
  server.on('connect', (req: http.IncomingMessage, socket: Socket) => {
    proxy.outbound.push(req.url ?? '');
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return proxy;
}
