import type { AppContext } from '../../context.ts';
import { noteSubmit, type CallEntry } from '../calls/call-entry.ts';
import type { TaskKind } from '../../db/types.ts';
import { serviceUnavailable } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import type { SubmitReceipt } from './tasks.schemas.ts';
import { acceptWebhook, recordRefusal } from '../webhooks/accept.ts';
import { submitTask } from './tasks.service.ts';

export interface Generation {
  kind: Exclude<TaskKind, 'avatar'>;
  params: { model: string } & object;
  holdUnits: number;
  webhook: string | undefined;
}

/** The common end of every generation submit: route, hold, write, wake the workers, answer the receipt. */
export async function submitGeneration(ctx: AppContext, key: CachedKey, generation: Generation, log?: CallEntry): Promise<SubmitReceipt> {
  const { model } = generation.params;
  if (log) log.facts.model = model;
  if (!(await ctx.channels.pick(model))) throw serviceUnavailable(`No upstream serves ${model} right now`);
  const webhook = await acceptWebhook(ctx, generation.webhook);
  const task = await submitTask(ctx.submits, {
    key,
    kind: generation.kind,
    model,
    params: { ...generation.params },
    holdUnits: generation.holdUnits,
    webhook: webhook.target,
    deadlineMs: ctx.config.deadlineMs[generation.kind],
  });
  if (log) noteSubmit(log, task.id, generation.holdUnits);
  recordRefusal(ctx, task.id, webhook);
  ctx.wakeWorkers();
  return { code: 200, data: [{ status: 'submitted', task_id: task.id }] };
}
