import { countText } from '../../lib/tokens/token-count.ts';
import type { ImageParams } from '../../core/task-params.ts';
import type { VideoParams } from '../../core/task-params.ts';
import type { Pricing } from './pricing.ts';

// What a task is held for at submit. Per-token models hold the prompt's tokens plus the output tokens
// of n images; they settle what the upstream reports, never more than the hold.

export function quoteImages(pricing: Pricing, params: ImageParams): number {
  if (pricing.isPerToken(params.model)) {
    return pricing.tokenUnits(params.model, countText(params.prompt), params.n * pricing.outputTokensPerImage(params.model));
  }
  return pricing.imageUnits(params.model, params.resolution, params.quality, params.n);
}

export function quoteVideo(pricing: Pricing, params: VideoParams): number {
  return pricing.videoUnits(params.model, params.resolution, params.duration);
}
