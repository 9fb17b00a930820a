import type { Transaction } from 'kysely';
import type { Database, Job } from '../../db/types.ts';
import { enqueue } from '../../jobs/jobs.repo.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import { getChannel } from '../channels/channels.repo.ts';
import { upstreamModelName } from '../../core/channel.ts';
import type { TaskEngineDeps } from './engine-deps.ts';
import { getTask, kindParams } from './tasks.repo.ts';
import type { TaskCall } from '../../core/task-provider.ts';

// Deadlines cancel upstream: a task our deadline failed is cancelled at its upstream, so
// the upstream does not bill it later. The cancel is a job written with the ending (or with the late
// hand-over of a task that had already ended), so a crash loses none. ModelArk cannot cancel a
// running task: the job then watches it until it ends, and logs a success that came too late. Our
// ending is final either way: nothing here touches the task's status or money.

/** In the ending's transaction: a task that ended by its deadline after being handed over. */
export async function cancelAfterDeadline(trx: Transaction<Database>, task: { id: string; upstream_id: string | null }, code: string): Promise<void> {
  if (code === 'timeout' && task.upstream_id) await enqueue(trx, { kind: 'cancel', taskId: task.id });
}

/** The upstream accepted a task that had meanwhile ended here: remember its id and cancel it. */
export async function cancelLateHandOver(trx: Transaction<Database>, taskId: string, channelId: string, upstreamId: string): Promise<void> {
  const moved = await trx
    .updateTable('tasks')
    .set({ channel_id: channelId, upstream_id: upstreamId })
    .where('id', '=', taskId)
    .where('status', 'in', ['completed', 'failed'])
    .where('upstream_id', 'is', null)
    .executeTakeFirst();
  if (moved.numUpdatedRows > 0n) await enqueue(trx, { kind: 'cancel', taskId });
}

export function cancelHandler(deps: TaskEngineDeps, options: { retryMs: number; watchMs: number }): JobHandler {
  return async (job: Job) => {
    const task = await getTask(deps.db, job.task_id);
    if (!task?.upstream_id || !task.channel_id) return { done: true };
    const channel = await getChannel(deps.db, task.channel_id);
    const provider = channel ? deps.providerFor(channel.type) : undefined;
    if (!channel || !provider?.cancel) return { done: true };
    const call: TaskCall = { task, ...kindParams(task), channel, upstreamModel: upstreamModelName(channel, task.model) };
    const outcome = await provider.cancel(call);
    const log = { task: task.id, upstream: task.upstream_id, status: task.status, upstreamStatus: outcome.status };
    if (outcome.cancelled) {
      deps.logger.info(log, 'upstream task cancelled after the task ended here');
      return { done: true };
    }
    if (outcome.status === 'succeeded') {
      deps.logger.warn(log, 'the upstream finished a task that had already ended here; the ending stands and nothing is charged');
      return { done: true };
    }
    if (outcome.status && ['failed', 'expired', 'cancelled', 'unsupported'].includes(outcome.status)) return { done: true };
    if (Date.now() - (task.completed_at ?? task.updated_at) > options.watchMs) {
      deps.logger.warn(log, 'gave up watching an upstream task that outlived its cancel');
      return { done: true };
    }
    // Still running there: it cannot be cancelled now; ask again until it ends.
    return { retryAt: Date.now() + options.retryMs };
  };
}
