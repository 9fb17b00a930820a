import Fastify from 'fastify';
import { Pool } from 'undici';

// The framework's own share of a proxy: bench/bare-proxy.ts's forwarding inside a Fastify route
// (the same Fastify as the gateway, the body parsed and its bytes forwarded, the answer sent with
// reply.send), nothing else. bench/text.ts loads it beside the bare proxy when BENCH_FRAMEWORK=1.
const upstream = new Pool(process.env.UPSTREAM!, { connections: 64 });
const app = Fastify({ logger: false });
// As the gateway does: the body parsed (a gateway must read it) and its bytes forwarded as they came.
const raw = new WeakMap<object, Buffer>();
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
  raw.set(request, body as Buffer);
  done(null, JSON.parse((body as Buffer).toString('utf8')));
});
app.post('/v1/messages', async (request, reply) => {
  const answer = await upstream.request({ path: '/v1/messages', method: 'POST', headers: { 'content-type': 'application/json' }, body: raw.get(request) });
  const body = Buffer.from(await answer.body.arrayBuffer());
  return reply.code(answer.statusCode).type('application/json').send(body);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
