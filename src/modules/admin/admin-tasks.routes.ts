import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { redeliver } from '../webhooks/redeliver.ts';
import { deliveriesOf, tasksForOperator } from './admin-tasks.service.ts';
import { Attempt, TasksQuery } from './admin.schemas.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';

// The operator's view of tasks and their callbacks. Registered just before webhooksRoutes, so the
// OpenAPI document lists these paths beside the callbacks' own.
export function adminTasksRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });

    app.get('/admin/tasks', { schema: doc('List tasks, newest first', { querystring: TasksQuery }) },
      async (request) => ({ data: await tasksForOperator(ctx, request.query) }));

    app.get('/admin/tasks/:id/deliveries', { schema: doc("A task's callback attempts", { params: IdParams, response: { 200: Type.Object({ data: Type.Array(Attempt) }), ...ErrorResponses } }) },
      async (request) => ({ data: await deliveriesOf(ctx, request.params.id) }));

    app.post('/admin/tasks/:id/redeliver', { schema: doc("Push a finished task's callback again (a new round of attempts)", { params: IdParams, response: { 202: Type.Object({ id: Type.String(), round: Type.Integer() }), ...ErrorResponses } }) },
      async (request, reply) => reply.status(202).send(await redeliver(ctx, request.params.id)));
  };
}
