import type { Job, Task } from '../../db/types.ts';
import type { JobHandler, JobOutcome } from '../../jobs/runner.ts';
import { enqueue } from '../../jobs/jobs.repo.ts';
import type { ProviderStep, TaskCall, TaskProvider } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import { abortAfter } from '../../lib/abort-after.ts';
import { getChannel } from '../channels/channels.repo.ts';
import { upstreamModelName } from '../../core/channel.ts';
import { getTask, kindParams, overdueTasks, transition } from './tasks.repo.ts';
import { endTask, type Ending } from './tasks.service.ts';
import { DownloadFailed, storeResult } from './task-results.ts';
import { pricesOf, type TaskEngineDeps } from './engine-deps.ts';
import { deadlinePassed, rejected, submitToChannels } from './task-failover.ts';
import { cancelLateHandOver } from './upstream-cancel.ts';

const DONE: JobOutcome = { done: true };
const isOpen = (task: Task | undefined): task is Task => task?.status === 'submitted' || task?.status === 'processing';

async function prepareCall(deps: TaskEngineDeps, task: Task): Promise<{ call: TaskCall; provider: TaskProvider } | Ending> {
  const channel = task.channel_id ? await getChannel(deps.db, task.channel_id) : await deps.channels.pick(task.model);
  if (!channel) return { state: 'failed', code: 'upstream_error', message: `No channel serves model ${task.model}` };
  const provider = deps.providerFor(channel.type);
  if (!provider) return { state: 'failed', code: 'internal_error', message: `Unknown channel type ${channel.type}` };
  const call: TaskCall = { task, ...kindParams(task), channel, upstreamModel: upstreamModelName(channel, task.model), prices: await pricesOf(deps, task) };
  return { call, provider };
}

async function step(call: TaskCall, run: () => Promise<ProviderStep>): Promise<ProviderStep> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UpstreamRejected) return rejected(err, call.channel);
    throw err;
  }
}

/** A completed result's files are stored first; one that cannot be fetched fails (and refunds) the task. */
async function withStoredFiles(deps: TaskEngineDeps, task: Task, ending: Ending): Promise<Ending> {
  if (ending.state !== 'completed') return ending;
  try {
    return { ...ending, result: await storeResult(deps.results, task, ending.result) };
  } catch (err) {
    if (!(err instanceof DownloadFailed)) throw err;
    deps.logger.warn({ task: task.id, err: err.message }, 'result file could not be stored');
    return { state: 'failed', code: 'upstream_error', message: `The upstream result could not be retrieved: ${err.message}` };
  }
}

async function end(deps: TaskEngineDeps, task: Task, produced: Ending): Promise<JobOutcome> {
  const ending = await withStoredFiles(deps, task, produced);
  const pricing = await pricesOf(deps, task);
  const won = await endTask(deps.db, task, ending, pricing, deps.onEnded);
  if (won) deps.afterEnded?.(task);
  deps.logger.info({ task: task.id, status: ending.state, won }, 'task ended');
  return DONE;
}

export function taskHandlers(deps: TaskEngineDeps): Record<'dispatch' | 'poll', JobHandler> {
  return {
    // Hands the task to its upstream, then moves it to `processing` with its first poll, atomically.
    async dispatch(job: Job) {
      const task = await getTask(deps.db, job.task_id);
      if (!isOpen(task)) return DONE;
      // Already handed over: the poll job was written in the same transaction as channel_id.
      if (task.status === 'processing' && task.channel_id) return DONE;
      // The deadline stops the work too, not only the bill: downloads and upstream calls are aborted.
      const deadline = abortAfter(task.deadline_at - Date.now());
      const handed = await submitToChannels(deps, task, deadline.signal).finally(() => deadline.done());
      if ('waitMs' in handed) return { retryAt: Date.now() + handed.waitMs };
      if ('state' in handed) return end(deps, task, handed);
      const { call, result } = handed;
      if (result.state !== 'pending') return end(deps, task, result);
      const now = Date.now();
      await deps.db.transaction().execute(async (trx) => {
        const moved = await transition(trx, task.id, [task.status], {
          status: 'processing',
          channel_id: call.channel.id,
          upstream_id: result.upstreamId ?? null,
          started_at: task.started_at ?? now,
          eta_at: result.etaAt ?? null,
          progress: Math.max(task.progress, result.progress ?? 10),
        });
        if (moved) await enqueue(trx, { kind: 'poll', taskId: task.id, runAt: result.pollAt });
        else if (result.upstreamId) await cancelLateHandOver(trx, task.id, call.channel.id, result.upstreamId);
      });
      return DONE;
    },

    // Asks the upstream how the task is doing; reschedules itself until the task ends.
    async poll(job: Job) {
      const task = await getTask(deps.db, job.task_id);
      if (!isOpen(task)) return DONE;
      const prepared = await prepareCall(deps, task);
      if ('state' in prepared) return end(deps, task, prepared);
      const result = await step(prepared.call, () => prepared.provider.poll(prepared.call));
      if (result.state !== 'pending') return end(deps, task, result);
      const progress = Math.max(task.progress, result.progress ?? task.progress);
      // Most polls of a long video change nothing: no write then (thousands of open tasks poll).
      const etaMoved = result.etaAt !== undefined && result.etaAt !== task.eta_at;
      if (progress !== task.progress || etaMoved) {
        await transition(deps.db, task.id, ['processing'], { progress, ...(etaMoved ? { eta_at: result.etaAt } : {}) });
      }
      return { retryAt: result.pollAt };
    },
  };
}

/** Fails every open task past its deadline with `timeout`, refunding it. Safe to run on every process. */
export async function sweepDeadlines(deps: TaskEngineDeps, limit = 100): Promise<number> {
  const overdue = await overdueTasks(deps.db, Date.now(), limit);
  let ended = 0;
  for (const task of overdue) {
    if (await endTask(deps.db, task, deadlinePassed(task), deps.pricing, deps.onEnded)) {
      deps.afterEnded?.(task);
      ended++;
    }
  }
  return ended;
}
