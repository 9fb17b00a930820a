import type { FastifyInstance } from 'fastify';

// CORS for every route: any origin may call with a key, and read our headers. The two headers go
// only on a request that names its Origin (a browser always does on a cross-origin call): a server
// or an agent calling the API never reads them, and each header costs every call its checks and bytes.
// Written here rather than with @fastify/cors to keep it to the request-id hook (see app.ts), plus
// one preflight route.

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
