import type { AppContext } from '../../context.ts';
import type { CallEntry } from '../calls/call-entry.ts';
import { checkUsableAssets } from '../avatars/avatars.service.ts';
import type { CachedKey } from '../../core/key.ts';
import { quoteVideo } from '../billing/quotes.ts';
import { normalizeVideoRequest } from '../catalog/video-rules.ts';
import type { SubmitReceipt } from '../tasks/tasks.schemas.ts';
import { submitGeneration } from '../tasks/submit-generation.ts';
import type { VideoRequest } from './videos.schemas.ts';

export async function submitVideo(ctx: AppContext, key: CachedKey, body: VideoRequest, log?: CallEntry): Promise<SubmitReceipt> {
  const { params, assetIds } = normalizeVideoRequest(body);
  // Asset URLs must name reviewed (Active) assets of the caller's account; no second review runs.
  if (assetIds.length > 0) await checkUsableAssets(ctx, key.user_id, assetIds);
  return submitGeneration(ctx, key, { kind: 'video', params, holdUnits: quoteVideo(ctx.groups.pricingFor(key.group, params.model), params), webhook: body.webhook }, log);
}
