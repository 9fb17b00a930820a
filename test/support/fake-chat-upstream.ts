import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real local HTTP server that speaks the chat-completions protocol, standing in for an upstream
// provider. `mode` decides how it answers; every request is counted and kept.

export type UpstreamMode = 'ok' | 'down' | 'unauthorized' | 'slow' | 'cut' | 'garbled';

export interface FakeChatUpstream {
  url: string;
  requests: { headers: http.IncomingHttpHeaders; body: any }[];
  /** Streams whose client went away before the end. */
  cancelled: number;
  mode: UpstreamMode;
  close(): Promise<void>;
}

export async function startFakeChatUpstream(secret: string, mode: UpstreamMode = 'ok'): Promise<FakeChatUpstream> {
  const fake = { requests: [], mode, cancelled: 0 } as unknown as FakeChatUpstream;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : {};
      fake.requests.push({ headers: req.headers, body });
      if (fake.mode === 'down') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
      if (req.headers.authorization !== `Bearer ${secret}` || fake.mode === 'unauthorized') {
        return void res.writeHead(401, { 'content-type': 'application/json' }).end(`{"error":{"message":"bad key ${req.headers.authorization}"}}`);
      }
      const last = body.messages.at(-1);
      const text = `echo: ${typeof last.content === 'string' ? last.content : last.content.find((p: any) => p.type === 'text')?.text}`;
      const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
      if (!body.stream && fake.mode === 'slow') {
        // Never answers: a caller that leaves must cancel the call.
        res.on('close', () => {
          if (!res.writableFinished) fake.cancelled++;
        });
        return;
      }
      // A 200 whose body stops halfway (the connection drops), and a 200 whose body is not JSON.
      if (!body.stream && fake.mode === 'cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' }).write('{"id":"chatcmpl-1","choi');
        return void setTimeout(() => res.destroy(), 20);
      }
      if (!body.stream && fake.mode === 'garbled') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>gateway hiccup</html>');
      if (!body.stream) {
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (fake.mode === 'slow') {
        // One word every 50 ms, for a long time: a client that leaves is noticed.
        let i = 0;
        const timer = setInterval(() => {
          res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: `word${i++} ` }, finish_reason: null }] })}\n\n`);
          if (i > 200) (clearInterval(timer), res.end('data: [DONE]\n\n'));
        }, 50);
        res.on('close', () => {
          if (!res.writableFinished) fake.cancelled++;
          clearInterval(timer);
        });
        return;
      }
      for (const word of text.split(/(?<= )/)) {
        res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}
