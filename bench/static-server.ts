import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';

// The baseline for /files: @fastify/static serving STATIC_DIR on PORT.
const app = Fastify();
await app.register(fastifyStatic, { root: process.env.STATIC_DIR!, maxAge: 3600 * 1000, immutable: true });
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
