import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real local HTTP server standing in for a caller's callback receiver. `respond` decides each
// answer: a status code, 'hang' (never answers), or a redirect.

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Reply = number | 'hang' | { redirect: string };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: number;
  respond: (request: Received, index: number) => Reply;
  close(): Promise<void>;
}

export async function startReceiver(respond: Receiver['respond'] = () => 200): Promise<Receiver> {
  const hanging: http.ServerResponse[] = [];
  const receiver = { received: [] as Received[], connections: 0, respond } as Receiver;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const entry = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      receiver.received.push(entry);
      const reply = receiver.respond(entry, receiver.received.length - 1);
      if (reply === 'hang') return void hanging.push(res);
      if (typeof reply === 'object') return void res.writeHead(302, { location: reply.redirect }).end();
      res.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  receiver.close = () =>
    new Promise((resolve) => {
      hanging.forEach((res) => res.destroy());
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
