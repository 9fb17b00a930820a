import type { AppContext } from '../../context.ts';
import { badRequest, serviceUnavailable } from '../../http/errors.ts';
import type { CachedKey } from '../../lib/key-cache.ts';
import { quoteVideo } from '../billing/quotes.ts';
import { normalizeVideoRequest } from '../catalog/video-rules.ts';
import type { SubmitReceipt } from '../images/images.schemas.ts';
import { submitTask } from '../tasks/tasks.service.ts';
import { acceptWebhook } from '../webhooks/accept.ts';
import type { VideoRequest } from './videos.schemas.ts';

export async function submitVideo(ctx: AppContext, key: CachedKey, body: VideoRequest): Promise<SubmitReceipt> {
  const { params, assetIds } = normalizeVideoRequest(body);
  // Asset URLs name reviewed avatar assets; until an account has any, every reference is unknown.
  if (assetIds.length > 0) throw badRequest(`asset://${assetIds[0]} is not an asset of this account`);
  if (!(await ctx.channels.pick(params.model))) throw serviceUnavailable(`No upstream serves ${params.model} right now`);
  const task = await submitTask(ctx.submits, {
    key,
    kind: 'video',
    model: params.model,
    params: { ...params },
    holdUnits: quoteVideo(ctx.pricing, params),
    webhook: await acceptWebhook(ctx, body.webhook),
    deadlineMs: ctx.config.deadlineMs.video,
  });
  ctx.wakeWorkers();
  return { code: 200, data: [{ status: 'submitted', task_id: task.id }] };
}
