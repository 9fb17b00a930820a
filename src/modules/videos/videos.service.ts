import type { AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import type { CachedKey } from '../../lib/key-cache.ts';
import { quoteVideo } from '../billing/quotes.ts';
import { normalizeVideoRequest } from '../catalog/video-rules.ts';
import type { SubmitReceipt } from '../images/images.schemas.ts';
import { submitGeneration } from '../tasks/submit-generation.ts';
import type { VideoRequest } from './videos.schemas.ts';

export async function submitVideo(ctx: AppContext, key: CachedKey, body: VideoRequest): Promise<SubmitReceipt> {
  const { params, assetIds } = normalizeVideoRequest(body);
  // Asset URLs name reviewed avatar assets; until an account has any, every reference is unknown.
  if (assetIds.length > 0) throw badRequest(`asset://${assetIds[0]} is not an asset of this account`);
  return submitGeneration(ctx, key, { kind: 'video', params, holdUnits: quoteVideo(ctx.pricing, params), webhook: body.webhook });
}
