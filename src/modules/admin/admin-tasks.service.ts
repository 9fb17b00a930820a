import type { Static } from 'typebox';
import type { AppContext } from '../../context.ts';
import { notFound } from '../../core/errors.ts';
import { getTask, listTasks } from '../tasks/tasks.repo.ts';
import { taskRecord, taskUsage } from '../tasks/task-record.ts';
import { listAttempts } from '../webhooks/webhooks.repo.ts';
import type { TasksQuery } from './admin.schemas.ts';

/** The newest 100 tasks (of one account, before an id): each the task record plus who and what. */
export async function tasksForOperator(ctx: AppContext, query: Static<typeof TasksQuery>) {
  const tasks = await listTasks(ctx.db, { userId: query.user_id, before: query.before, limit: 100 });
  return tasks.map((t) => ({ ...taskRecord(t, ctx.config), user_id: t.user_id, model: t.model, kind: t.kind, webhook: t.webhook, usage: taskUsage(t) }));
}

/** Every callback attempt of a task, oldest first; 404 for a task that does not exist. */
export async function deliveriesOf(ctx: AppContext, taskId: string) {
  if (!(await getTask(ctx.db, taskId))) throw notFound(`No task ${taskId}`);
  return listAttempts(ctx.db, taskId);
}
