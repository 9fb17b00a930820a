import type { ProviderSettings } from '../../core/provider-settings.ts';
import type { ReviewedAssets } from '../../core/reviewed-assets.ts';
import type { TaskPrices } from '../../core/prices.ts';
import { upstreamGroupId } from './ark.asset-ids.ts';
import { ArkAvatar } from './ark.avatar.ts';

/** The avatar-review provider of an ark channel, reading our groups (and their upstream ids) from earlier reviews. */
export function arkAvatar(config: Readonly<ProviderSettings>, pricing: TaskPrices, reviewed: ReviewedAssets | undefined): ArkAvatar {
  return new ArkAvatar({
    pricing,
    pollMs: config.upstreamTasks.pollMs,
    timeoutMs: config.upstreamTimeoutMs,
    async group(ourGroupId) {
      const found = await reviewed?.group(ourGroupId);
      if (!found) return undefined;
      return { name: found.name, description: found.description, upstream: upstreamGroupId(found.reviewUpstreams) };
    },
  });
}
