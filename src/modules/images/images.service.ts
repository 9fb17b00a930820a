import type { AppContext } from '../../context.ts';
import type { CallEntry } from '../calls/call-entry.ts';
import type { CachedKey } from '../../core/key.ts';
import { quoteImages } from '../billing/quotes.ts';
import { normalizeImageRequest } from '../catalog/image-rules.ts';
import { submitGeneration } from '../tasks/submit-generation.ts';
import type { ImageRequest } from './images.schemas.ts';
import type { SubmitReceipt } from '../tasks/tasks.schemas.ts';

export async function submitImages(ctx: AppContext, key: CachedKey, body: ImageRequest, log?: CallEntry): Promise<SubmitReceipt> {
  const params = normalizeImageRequest(body);
  return submitGeneration(ctx, key, { kind: 'image', params, holdUnits: quoteImages(ctx.groups.pricingFor(key.group, params.model), params), webhook: body.webhook }, log);
}
