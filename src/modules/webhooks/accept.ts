import type { AppContext } from '../../context.ts';
import { recordAttempt } from './webhooks.repo.ts';
import { callbackUrl, checkTarget } from '../../lib/net/target.ts';

/** Where a submit's callback goes (`target`), or why it goes nowhere (`refusal`). */
export interface WebhookChoice {
  target: string | null;
  refusal?: { url: string; reason: string };
}

/**
 * The callback target of a submit. An address that breaks a rule is dropped silently for the caller:
 * the submit succeeds and no request is ever made. The operator is told: a warning in
 * the log and, once the task exists, a `refused` delivery record (`recordRefusal`).
 */
export async function acceptWebhook(ctx: AppContext, base: string | undefined): Promise<WebhookChoice> {
  if (base === undefined || base.trim() === '') return { target: null };
  let target: string;
  try {
    target = callbackUrl(base.trim());
  } catch {
    return refused(ctx, base.trim(), 'not a valid http or https address');
  }
  const verdict = await checkTarget(target, ctx.config, ctx.resolve);
  return verdict.ok ? { target } : refused(ctx, target, verdict.reason);
}

function refused(ctx: AppContext, url: string, reason: string): WebhookChoice {
  ctx.metrics.webhooks.inc({ outcome: 'refused' });
  return { target: null, refusal: { url: url.slice(0, 2048), reason } };
}

/** Records a refused callback address as the task's one delivery, so operators can see why none came. */
export function recordRefusal(ctx: AppContext, taskId: string, choice: WebhookChoice): void {
  const { refusal } = choice;
  if (!refusal) return;
  ctx.logger.warn({ task: taskId, url: refusal.url, reason: refusal.reason }, `callback address refused at submit (${refusal.reason}): no callback will be sent for this task`);
  recordAttempt(ctx.db, { task_id: taskId, round: 0, attempt: 0, url: refusal.url, at: Date.now(), status_code: null, error: refusal.reason, duration_ms: 0, outcome: 'refused' }).catch((err) =>
    ctx.logger.warn({ err, task: taskId }, 'recording a refused callback address failed'),
  );
}
