import type { FastifyInstance } from 'fastify';

// CORS for every route: any origin may call with a key, and read our headers.
// Written here rather than with @fastify/cors to keep it to two headers set in the request-id hook
// (see app.ts) on the hot path, plus one preflight route.

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset',
};

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, POST, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, x-api-key, vendor-version, x-request-id',
  'access-control-max-age': '86400',
};

export function registerPreflight(app: FastifyInstance): void {
  app.options('/*', { schema: { hide: true }, config: { envelope: 'of-path', keySources: [] } }, async (_request, reply) => reply.headers(PREFLIGHT_HEADERS).status(204).send());
}
