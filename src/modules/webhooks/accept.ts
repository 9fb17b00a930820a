import type { AppContext } from '../../context.ts';
import { callbackUrl, checkTarget } from './target.ts';

/**
 * The callback target of a submit, or null. An address that breaks a rule is dropped silently
 * (SPEC 6.6): the submit succeeds and no request is ever made; operators see it in the metrics.
 */
export async function acceptWebhook(ctx: AppContext, base: string | undefined): Promise<string | null> {
  if (base === undefined || base.trim() === '') return null;
  let target: string;
  try {
    target = callbackUrl(base.trim());
  } catch {
    ctx.metrics.webhooks.inc({ outcome: 'refused' });
    return null;
  }
  const verdict = await checkTarget(target, ctx.config, ctx.resolve);
  if (verdict.ok) return target;
  ctx.metrics.webhooks.inc({ outcome: 'refused' });
  ctx.logger.info({ reason: verdict.reason }, 'callback address refused at submit');
  return null;
}
