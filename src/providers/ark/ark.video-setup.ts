import type { ProviderSettings } from '../../core/provider-settings.ts';
import type { ReviewedAssets } from '../../core/reviewed-assets.ts';
import { upstreamAssetIds } from './ark.asset-ids.ts';
import { ArkVideo, arkVideoCall } from './ark.video.ts';
import { ArkRequestPacer } from './ark.video-batch.ts';

/** The video provider of an ark channel, with the engine's callback URLs and the asset-id lookup. */
export function arkVideo(config: Readonly<ProviderSettings>, reviewed: ReviewedAssets | undefined, callbackUrl?: (taskId: string) => string | undefined): ArkVideo {
  return new ArkVideo({
    pollMs: config.upstreamTasks.pollMs,
    maxPollMs: config.upstreamTasks.maxPollMs,
    timeoutMs: config.upstreamTimeoutMs,
    callbackUrl,
    upstreamAssets: reviewed ? (ids) => upstreamAssetIds(reviewed, ids) : undefined,
    pacer: new ArkRequestPacer((call, method, path) => arkVideoCall(call, method, path, config.upstreamTimeoutMs)),
  });
}
