import type { AppContext } from '../../context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { enqueue } from '../../jobs/jobs.repo.ts';
import { bumpWebhookRound, getTask } from '../tasks/tasks.repo.ts';

/** Pushes a finished task's callback again: a new round of attempts (the admin route and the CLI). */
export async function redeliver(ctx: AppContext, taskId: string): Promise<{ id: string; round: number }> {
  const task = await getTask(ctx.db, taskId);
  if (!task) throw notFound(`No task ${taskId}`);
  if (!task.webhook) throw badRequest('This task has no callback address');
  if (task.status !== 'completed' && task.status !== 'failed') throw badRequest('Only a finished task has a callback to push');
  await ctx.db.transaction().execute(async (trx) => {
    await bumpWebhookRound(trx, task.id);
    await enqueue(trx, { kind: 'deliver', taskId: task.id });
  });
  ctx.wakeWorkers();
  return { id: task.id, round: task.webhook_round + 1 };
}
