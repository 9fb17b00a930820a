import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { getTask, listTasks } from '../tasks/tasks.repo.ts';
import { taskRecord } from '../tasks/task-record.ts';
import { redeliver } from './redeliver.ts';
import { listAttempts, rotateSigningSecret, signingSecret } from './webhooks.repo.ts';

const Attempt = Type.Object({
  attempt: Type.Integer(),
  round: Type.Integer({ description: 'Bumped by each redelivery' }),
  url: Type.String(),
  at: Type.Integer({ description: 'Unix time, ms' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  outcome: Type.String({ description: 'delivered, retry, dropped, failed (4xx) or refused (address rules)' }),
});
const Secret = Type.Object({ user_id: Type.String(), secret: Type.String({ description: 'Standard Webhooks secret (whsec_...)' }) });

export function webhooksRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });

    app.get('/admin/tasks', { schema: doc('List tasks, newest first', { querystring: Type.Object({ user_id: Type.Optional(Type.String({ maxLength: 100 })), before: Type.Optional(Type.String({ maxLength: 100 })) }) }) },
      async (request) => {
        const tasks = await listTasks(ctx.db, { userId: request.query.user_id, before: request.query.before, limit: 100 });
        return { data: tasks.map((t) => ({ ...taskRecord(t, ctx.config), user_id: t.user_id, model: t.model, kind: t.kind, webhook: t.webhook })) };
      });

    app.get('/admin/tasks/:id/deliveries', { schema: doc("A task's callback attempts", { params: IdParams, response: { 200: Type.Object({ data: Type.Array(Attempt) }), ...ErrorResponses } }) },
      async (request) => {
        if (!(await getTask(ctx.db, request.params.id))) throw notFound(`No task ${request.params.id}`);
        return { data: await listAttempts(ctx.db, request.params.id) };
      });

    app.post('/admin/tasks/:id/redeliver', { schema: doc("Push a finished task's callback again (a new round of attempts)", { params: IdParams, response: { 202: Type.Object({ id: Type.String(), round: Type.Integer() }), ...ErrorResponses } }) },
      async (request, reply) => reply.status(202).send(await redeliver(ctx, request.params.id)));

    app.get('/admin/users/:id/webhook-secret', { schema: doc("The account's callback signing secret", { params: IdParams, response: { 200: Secret, ...ErrorResponses } }) },
      async (request) => {
        const secret = await signingSecret(ctx.db, request.params.id);
        if (!secret) throw notFound(`No user ${request.params.id}`);
        return { user_id: request.params.id, secret };
      });

    app.post('/admin/users/:id/webhook-secret/rotate', { schema: doc('Replace the signing secret; later callbacks use the new one', { params: IdParams, response: { 200: Secret, ...ErrorResponses } }) },
      async (request) => {
        const secret = await rotateSigningSecret(ctx.db, request.params.id);
        if (!secret) throw notFound(`No user ${request.params.id}`);
        return { user_id: request.params.id, secret };
      });
  };
}
