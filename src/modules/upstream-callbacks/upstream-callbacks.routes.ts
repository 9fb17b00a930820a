import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { notFound, rateLimited } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { getTask } from '../tasks/tasks.repo.ts';
import { CALLBACK_PATH, tokenMatches } from './callback-token.ts';
import { pollNow } from './upstream-callbacks.repo.ts';
import { declareSurface } from '../../http/surface.ts';

// The inbound end of upstream callbacks. The body is never trusted as the result: a valid callback
// only moves the task's next poll to now, so a forged or replayed one can at most cost one GET. A
// wrong token and an unknown task get the same 404, and the route has its own rate limit.

const ENDINGS = new Set(['succeeded', 'failed', 'expired', 'cancelled']);
const POLL_NOW_TRIES = 5;
const POLL_NOW_RETRY_MS = 500;

/**
 * Makes the task's poll due now. A poll running at this moment (its job leased) may have read the
 * upstream just before the ending: the change is tried again shortly, so the ending is not left for
 * the next poll of the backoff.
 */
function pollSoon(ctx: AppContext, taskId: string, tries: number): void {
  pollNow(ctx.db, taskId).then(
    (outcome) => {
      if (outcome === 'moved') ctx.wakeWorkers();
      else if (outcome === 'running' && tries > 1) setTimeout(() => pollSoon(ctx, taskId, tries - 1), POLL_NOW_RETRY_MS).unref();
    },
    (err) => ctx.logger.warn({ err, task: taskId }, 'could not bring a poll forward after an upstream callback'),
  );
}

export function upstreamCallbacksRoutes(ctx: AppContext, secret: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: [] });
    app.post(
      `${CALLBACK_PATH}/:taskId/:token`,
      {
        bodyLimit: 64 * 1024,
        schema: {
          hide: true,
          params: Type.Object({ taskId: Type.String({ maxLength: 100 }), token: Type.String({ maxLength: 100 }) }),
          body: Type.Optional(Type.Unknown()),
          response: { 200: Type.Object({}), ...ErrorResponses },
        },
      },
      async (request) => {
        const { taskId, token } = request.params;
        const reported = (request.body as { status?: unknown } | undefined)?.status;
        const valid = tokenMatches(secret, taskId, token);
        // Queued and running callbacks cost nothing (no read, no share of the limit): at 10,000
        // tasks their burst used up the limit and the endings after it were refused. Strangers
        // (no valid token) and endings, which cost a read and a poll, count against the limit.
        if (valid && typeof reported === 'string' && !ENDINGS.has(reported)) return {};
        const decision = await ctx.rateLimiter.hit('upstream-callbacks', ctx.config.upstreamTasks.callbacksPerSecond * 60);
        if (!decision.allowed) throw rateLimited(Math.ceil(decision.resetMs / 1000));
        if (!valid) throw notFound();
        const task = await getTask(ctx.db, taskId);
        if (!task) throw notFound();
        if (task.status === 'completed' || task.status === 'failed') {
          const level = reported === 'succeeded' && task.status === 'failed' ? 'warn' : 'info';
          ctx.logger[level]({ task: task.id, status: task.status, upstreamStatus: reported }, 'upstream callback for a task that already ended; its ending stands');
          return {};
        }
        pollSoon(ctx, task.id, POLL_NOW_TRIES);
        return {};
      },
    );
  };
}
