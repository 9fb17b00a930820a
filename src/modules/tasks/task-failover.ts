import type { Task } from '../../db/types.ts';
import { ChannelRefused, ReferencesBusy, UpstreamRejected, type ProviderStep, type TaskCall } from '../../core/task-provider.ts';
import { upstreamModelName, withoutChannelSecret, type Channel } from '../../core/channel.ts';
import { getChannel } from '../channels/channels.repo.ts';
import { admitted } from './admission.ts';
import { channelAccepted, channelFailed } from './channel-health.ts';
import { pricesOf, type TaskEngineDeps } from './engine-deps.ts';
import type { Ending } from './tasks.service.ts';
import { kindParams } from './tasks.repo.ts';

// Task failover: a submit goes to the task's channels best first (priority, then weight, as text
// calls are routed) until one accepts it. A submit that fails before the upstream accepted the work
// (a thrown error: connection refused, timeout, 429, 5xx) moves on to the next channel; a refusal of
// the task itself (UpstreamRejected) ends it there, and a refusal of the channel's credentials
// (401/403) also marks the channel. When every channel failed, the job is retried later, from the
// best channel again.

export type Handed = { call: TaskCall; result: ProviderStep } | Ending | { waitMs: number };

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** How a task the upstream refused ends: its message without the channel's credentials, should the upstream have echoed them. */
export const rejected = (err: UpstreamRejected, channel: Channel): Ending => ({ state: 'failed', code: err.code, message: withoutChannelSecret(channel, err.message) });

/** How a task past its deadline ends (the sweeper's ending, and a submit cut off by the deadline). */
export function deadlinePassed(task: Task): Ending {
  const seconds = Math.round((task.deadline_at - task.created_at) / 1000);
  return { state: 'failed', code: 'timeout', message: `The task did not finish within ${seconds} s` };
}

/** `signal` aborts at the task's deadline: the provider's downloads and calls stop, and the task ends as timed out. */
export async function submitToChannels(deps: TaskEngineDeps, task: Task, signal?: AbortSignal): Promise<Handed> {
  const pinned = task.channel_id ? await getChannel(deps.db, task.channel_id) : undefined;
  const channels = pinned ? [pinned] : await deps.channels.candidates(task.model);
  if (channels.length === 0) return { state: 'failed', code: 'upstream_error', message: `No channel serves model ${task.model}` };
  const params = kindParams(task);
  const prices = await pricesOf(deps, task);
  let lastError: unknown;
  for (const channel of channels) {
    const provider = deps.providerFor(channel.type);
    if (!provider) return { state: 'failed', code: 'internal_error', message: `Unknown channel type ${channel.type}` };
    // Over the channel's max_in_flight the task waits, submitted, in submit order (admission.ts).
    if (!(await admitted(deps.db, channel, task))) return { waitMs: deps.admissionRetryMs ?? 1000 };
    const call: TaskCall = { task, ...params, channel, upstreamModel: upstreamModelName(channel, task.model), signal, prices };
    try {
      const result = await provider.submit(call);
      await channelAccepted(deps.db, channel);
      return { call, result };
    } catch (err) {
      // No download slot free: the job asks again later instead of waiting in its worker slot.
      if (err instanceof ReferencesBusy) return { waitMs: err.waitMs };
      if (signal?.aborted) return deadlinePassed(task);
      if (err instanceof ChannelRefused) await channelFailed(deps.db, channel.id, err.message, true);
      if (err instanceof UpstreamRejected) return rejected(err, channel);
      lastError = err;
      deps.logger.warn({ task: task.id, channel: channel.id, err: describe(err) }, 'submit failed before the upstream accepted it; trying the next channel');
      await channelFailed(deps.db, channel.id, describe(err));
    }
  }
  throw lastError;
}
