import type { AppContext } from '../../context.ts';
import { serviceUnavailable } from '../../http/errors.ts';
import type { CachedKey } from '../../lib/key-cache.ts';
import { quoteImages } from '../billing/quotes.ts';
import { normalizeImageRequest } from '../catalog/image-rules.ts';
import { submitTask } from '../tasks/tasks.service.ts';
import { acceptWebhook } from '../webhooks/accept.ts';
import type { ImageRequest, SubmitReceipt } from './images.schemas.ts';

export async function submitImages(ctx: AppContext, key: CachedKey, body: ImageRequest): Promise<SubmitReceipt> {
  const params = normalizeImageRequest(body);
  if (!(await ctx.channels.pick(params.model))) throw serviceUnavailable(`No upstream serves ${params.model} right now`);
  const task = await submitTask(ctx.submits, {
    key,
    kind: 'image',
    model: params.model,
    params: { ...params },
    holdUnits: quoteImages(ctx.pricing, params),
    webhook: await acceptWebhook(ctx, body.webhook),
    deadlineMs: ctx.config.deadlineMs.image,
  });
  ctx.wakeWorkers();
  return { code: 200, data: [{ status: 'submitted', task_id: task.id }] };
}
