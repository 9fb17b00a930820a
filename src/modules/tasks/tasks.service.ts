import type { Kysely, Transaction } from 'kysely';
import type { Database, Task, TaskKind } from '../../db/types.ts';
import { paymentRequired } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { CachedKey } from '../../core/key.ts';
import type { Pricing } from '../billing/pricing.ts';
import { InsufficientFunds, refund } from '../billing/ledger.ts';
import type { ProviderStep } from '../../core/task-provider.ts';
import { transition } from './tasks.repo.ts';
import { SubmitBatcher, writeSubmits } from './submit-batcher.ts';

export interface SubmitInput {
  key: CachedKey;
  kind: TaskKind;
  model: string;
  params: Record<string, unknown>;
  /** The quote, held now and settled when the task ends. */
  holdUnits: number;
  webhook?: string | null;
  deadlineMs: number;
  /** Avatar tasks are `processing` from the start, with progress 10. */
  initialStatus?: 'submitted' | 'processing';
}

/**
 * One transaction: hold the quote (402 when the account or the key cannot pay), write the task and
 * its dispatch job. Either all of it happens or none of it does.
 */
export async function submitTask(db: Kysely<Database> | SubmitBatcher, input: SubmitInput): Promise<Task> {
  const task = newTask(input);
  try {
    if (db instanceof SubmitBatcher) {
      await db.submit(task);
    } else {
      const [failure] = await db.transaction().execute((trx) => writeSubmits(trx, [task]));
      if (failure) throw failure;
    }
  } catch (err) {
    throw asPaymentError(err);
  }
  return task;
}

/** A 402 for a hold that could not be paid; any other error unchanged. */
export function asPaymentError(err: unknown): unknown {
  if (!(err instanceof InsufficientFunds)) return err;
  return paymentRequired(err.payer === 'account' ? 'Insufficient account balance for this task' : 'Insufficient quota on this API key for this task');
}

/** The row of a task about to be submitted (written by writeSubmits). */
export function newTask(input: SubmitInput): Task {
  const now = Date.now();
  const status = input.initialStatus ?? 'submitted';
  const task: Task = {
    id: newId('task'),
    user_id: input.key.user_id,
    key_id: input.key.id,
    kind: input.kind,
    model: input.model,
    params: JSON.stringify(input.params),
    status,
    progress: status === 'processing' ? 10 : 0,
    channel_id: null,
    upstream_id: null,
    hold_amount: input.holdUnits,
    key_limited: input.key.unlimited === 1 ? 0 : 1,
    cost: null,
    webhook: input.webhook ?? null,
    result: null,
    error_code: null,
    error_message: null,
    created_at: now,
    started_at: status === 'processing' ? now : null,
    eta_at: null,
    deadline_at: now + input.deadlineMs,
    completed_at: null,
    updated_at: now,
    webhook_round: 0,
    input_tokens: null,
    output_tokens: null,
  };
  return task;
}

export type Ending = Extract<ProviderStep, { state: 'completed' | 'failed' }>;

/** What a completed task really costs: per-token models settle their counted tokens, never above the hold. */
export function settledCost(task: Task, ending: Ending, pricing: Pricing): number {
  // Partly useful work (an avatar review where some assets passed) is billed for that part only.
  if (ending.billedUnits !== undefined) return Math.max(0, Math.min(task.hold_amount, ending.billedUnits));
  if (ending.state === 'failed') return 0;
  if (ending.usage && pricing.isPerToken(task.model)) {
    return Math.min(task.hold_amount, pricing.tokenUnits(task.model, ending.usage.inputTokens, ending.usage.outputTokens));
  }
  return task.hold_amount;
}

/**
 * The only way a task ends. The compare-and-set on its status and the money movement share one
 * transaction: whoever ends a task first settles it, every later attempt changes nothing.
 */
export async function endTask(
  db: Kysely<Database>,
  task: Task,
  ending: Ending,
  pricing: Pricing,
  /** Work that must commit with the ending, such as enqueueing the callback. */
  onEnded?: (trx: Transaction<Database>, task: Task, ending: Ending) => Promise<void>,
): Promise<boolean> {
  const cost = settledCost(task, ending, pricing);
  const now = Date.now();
  return db.transaction().execute(async (trx) => {
    const won = await transition(trx, task.id, ['submitted', 'processing'], {
      status: ending.state,
      progress: 100,
      cost,
      completed_at: now,
      result: ending.result ? JSON.stringify(ending.result) : null,
      error_code: ending.state === 'failed' ? ending.code : null,
      error_message: ending.state === 'failed' ? ending.message : null,
      ...(ending.state === 'completed' && ending.usage ? { input_tokens: ending.usage.inputTokens, output_tokens: ending.usage.outputTokens } : {}),
    });
    if (!won) return false;
    await refund(trx, {
      userId: task.user_id,
      keyId: task.key_id,
      keyLimited: task.key_limited === 1,
      amount: task.hold_amount - cost,
      ref: task.id,
      note: cost === 0 ? `task failed: ${ending.state === 'failed' ? ending.code : ''}` : 'settled below the hold',
    });
    await onEnded?.(trx, task, ending);
    return true;
  });
}
