import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ping } from '../../db/index.ts';
import { serviceUnavailable } from '../../http/errors.ts';

export function systemRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const Health = Type.Object({ status: Type.String() });
    app.get('/healthz', { schema: { tags: ['system'], summary: 'The process is up', response: { 200: Health } } },
      async () => ({ status: 'ok' }));

    app.get('/readyz', { schema: { tags: ['system'], summary: 'The database (and Redis, when set) answer', response: { 200: Health } } },
      async () => {
        try {
          await ping(ctx.db);
          if (ctx.redis) await ctx.redis.ping();
        } catch (err) {
          ctx.logger.warn({ err }, 'readiness check failed');
          throw serviceUnavailable('Not ready: a backing store does not answer');
        }
        return { status: 'ready' };
      });

    app.get('/metrics', { schema: { tags: ['system'], summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
      reply.header('content-type', ctx.metrics.registry.contentType);
      return ctx.metrics.registry.metrics();
    });

    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
