import http from 'node:http';
import { Pool } from 'undici';

// The yardstick for a proxy: forwards every request to UPSTREAM with undici's pooled client, no auth,
// no billing, nothing else.
const upstream = new Pool(process.env.UPSTREAM!, { connections: 64 });
http
  .createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await upstream.request({ path: req.url!, method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    const body = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
