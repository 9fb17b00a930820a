import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ping } from '../../db/index.ts';
import { serviceUnavailable, unauthorized } from '../../core/errors.ts';
import { declareSurface } from '../../http/surface.ts';

const READY_TIMEOUT_MS = 2000;

function sameSecret(given: string | undefined, expected: Buffer): boolean {
  const bytes = Buffer.from(given ?? '');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

export function systemRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: [] });
    const Health = Type.Object({ status: Type.String() });
    app.get('/healthz', { schema: { tags: ['system'], summary: 'The process is up', response: { 200: Health } } },
      async () => ({ status: 'ok' }));

    app.get('/readyz', { schema: { tags: ['system'], summary: 'The database (and Redis, when set) answer', response: { 200: Health } } },
      async () => {
        let timer: NodeJS.Timeout | undefined;
        try {
          // A store that takes connections but never answers (a cut network) must not hang the probe.
          const late = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
          });
          await Promise.race([Promise.all([ping(ctx.db), ctx.redis?.ping()]), late]);
        } catch (err) {
          ctx.logger.warn({ err }, 'readiness check failed');
          throw serviceUnavailable('Not ready: a backing store does not answer');
        } finally {
          clearTimeout(timer);
        }
        return { status: 'ready' };
      });

    const metricsAuth = ctx.config.metricsToken ? Buffer.from(`Bearer ${ctx.config.metricsToken}`) : undefined;
    app.get('/metrics', { config: { keySources: ['bearer'] }, schema: { tags: ['system'], summary: 'Prometheus metrics (METRICS_TOKEN, when set, as a bearer token)', hide: true } }, async (request, reply) => {
      if (metricsAuth && !sameSecret(request.headers.authorization, metricsAuth)) throw unauthorized('GET /metrics needs Authorization: Bearer $METRICS_TOKEN');
      reply.header('content-type', ctx.metrics.registry.contentType);
      return ctx.metrics.registry.metrics();
    });

    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
