import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard } from '../accounts/key-guard.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { getOwnTasks, getTask } from './tasks.repo.ts';
import { taskRecordJson } from './task-record.ts';
import { TaskRecord } from './tasks.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

/** How many tasks one batch status read may ask for. */
export const MAX_BATCH_IDS = 100;
const ID_MAX_LENGTH = 100;

/** `ids=a,b,c`: the distinct ids in the order given; a 400 for none, too many, or one too long. */
function parseIds(raw: string): string[] {
  const ids = [...new Set(raw.split(',').map((id) => id.trim()).filter((id) => id !== ''))];
  if (ids.length === 0) throw badRequest('ids: give at least one task id');
  if (ids.length > MAX_BATCH_IDS) throw badRequest(`ids: at most ${MAX_BATCH_IDS} task ids, got ${ids.length}`);
  const long = ids.find((id) => id.length > ID_MAX_LENGTH);
  if (long !== undefined) throw badRequest(`ids: a task id has at most ${ID_MAX_LENGTH} characters`);
  return ids;
}

export function tasksRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    // Polling is how a caller learns a result: status reads count against the key's read budget.
    const readGuard = keyGuard(ctx, { read: true });
    app.get(
      '/v1/tasks/:id',
      {
        preValidation: readGuard,
        schema: {
          tags: ['tasks'],
          summary: 'Poll an image, video or avatar task',
          security: [{ bearer: [] }],
          params: Type.Object({ id: Type.String({ maxLength: ID_MAX_LENGTH }) }),
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
    app.get(
      '/v1/tasks',
      {
        preValidation: readGuard,
        schema: {
          tags: ['tasks'],
          summary: `Poll up to ${MAX_BATCH_IDS} tasks at once`,
          description:
            `\`ids\` is a comma-separated list of task ids (repeats count once; more than ${MAX_BATCH_IDS} is a 400). ` +
            '`data` holds the record of each of your tasks among them, in the order asked; an id that is not ' +
            "one of your account's tasks (unknown, or another account's) is simply not in `data`. One call counts once against the key's read budget.",
          security: [{ bearer: [] }],
          querystring: Type.Object({ ids: Type.String({ minLength: 1, maxLength: MAX_BATCH_IDS * (ID_MAX_LENGTH + 1), description: 'Task ids separated by commas' }) }),
          response: { 200: Type.Object({ code: Type.Literal(200), data: Type.Array(TaskRecord) }), ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const ids = parseIds(request.query.ids);
        const found = new Map((await getOwnTasks(ctx.db, request.apiKey!.user_id, ids)).map((task) => [task.id, task]));
        const records = ids.flatMap((id) => {
          const task = found.get(id);
          return task ? [taskRecordJson(task, ctx.config)] : [];
        });
        reply.type('application/json; charset=utf-8');
        return `{"code":200,"data":[${records.join(',')}]}`;
      },
    );
  };
}
