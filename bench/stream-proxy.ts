import http from 'node:http';
import { Pool } from 'undici';

// The yardstick for a streaming proxy: forwards every request to UPSTREAM with undici's pooled
// client and pipes the answer back chunk by chunk as it arrives; no auth, no parsing, no billing.
const upstream = new Pool(process.env.UPSTREAM!, { connections: 64 });
http
  .createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await upstream.request({ path: req.url!, method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
// A clean exit on SIGTERM, so `--cpu-prof` (NODE_ARGS) writes its profile.
process.on('SIGTERM', () => process.exit(0));
