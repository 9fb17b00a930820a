import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { getTask } from './tasks.repo.ts';
import { taskRecordJson } from './task-record.ts';
import { TaskRecord } from './tasks.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

export function tasksRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    app.get(
      '/v1/tasks/:id',
      {
        preValidation: keyGuard(ctx),
        schema: {
          tags: ['tasks'],
          summary: 'Poll an image, video or avatar task',
          security: [{ bearer: [] }],
          params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
          response: { 200: Type.Object({ code: Type.Literal(200), data: TaskRecord }), 404: ErrorResponses[400], ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const task = await getTask(ctx.db, request.params.id);
        // Another account's task is as unknown as a task that never existed.
        if (!task || task.user_id !== request.apiKey!.user_id) throw notFound(`No task ${request.params.id}`);
        // Serialized by hand with the same function as callbacks, so a callback body is byte-for-byte
        // the `data` a poll would have returned at that moment.
        reply.type('application/json; charset=utf-8');
        return `{"code":200,"data":${taskRecordJson(task, ctx.config)}}`;
      },
    );
  };
}
