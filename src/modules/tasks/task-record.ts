import type { Task } from '../../db/types.ts';
import { toBalance, toCredits, type MoneyFormat } from '../../lib/money.ts';

const seconds = (ms: number) => Math.floor(ms / 1000);

/** While processing, progress rises towards the upstream's expected finish without reaching 100. */
export function currentProgress(task: Task, now = Date.now()): number {
  if (task.status === 'completed' || task.status === 'failed') return 100;
  if (task.status === 'submitted') return task.progress;
  if (task.eta_at && task.started_at && task.eta_at > task.started_at) {
    const fraction = Math.min(1, (now - task.started_at) / (task.eta_at - task.started_at));
    return Math.max(task.progress, Math.min(95, 10 + Math.floor(85 * fraction)));
  }
  return task.progress;
}

/** The task record: the `data` of GET /v1/tasks/{id} and the body of a callback. */
export function taskRecord(task: Task, money: MoneyFormat, now = Date.now()): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: task.id,
    status: task.status,
    progress: currentProgress(task, now),
    created: seconds(task.created_at),
  };
  const terminal = task.status === 'completed' || task.status === 'failed';
  if (terminal && task.completed_at) record.completed = seconds(task.completed_at);
  if (task.status === 'completed' && task.completed_at) {
    record.actual_time = Math.max(0, Math.round((task.completed_at - task.created_at) / 1000));
  }
  if (terminal) {
    const cost = task.cost ?? 0;
    record.cost = toBalance(cost, money);
    record.credits_cost = toCredits(cost, money);
  }
  if (task.result) record.result = JSON.parse(task.result);
  if (task.status === 'failed') record.error = { message: task.error_message ?? '', code: task.error_code ?? '' };
  return record;
}

export function taskRecordJson(task: Task, money: MoneyFormat, now = Date.now()): string {
  return JSON.stringify(taskRecord(task, money, now));
}

/** The tokens an upstream counted for a task, for the operator and the console; null when none. */
export function taskUsage(task: Pick<Task, 'input_tokens' | 'output_tokens'>): { input_tokens: number; output_tokens: number } | null {
  return task.input_tokens === null || task.output_tokens === null ? null : { input_tokens: Number(task.input_tokens), output_tokens: Number(task.output_tokens) };
}
