import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/types.ts';
import { upstreamAssetIds } from './ark.asset-ids.ts';
import { ArkVideo, arkVideoCall } from './ark.video.ts';
import { ArkRequestPacer } from './ark.video-batch.ts';

/** The video provider of an ark channel, with the engine's callback URLs and the asset-id lookup. */
export function arkVideo(config: Readonly<Config>, db: Kysely<Database> | undefined, callbackUrl?: (taskId: string) => string | undefined): ArkVideo {
  return new ArkVideo({
    pollMs: config.upstreamTasks.pollMs,
    maxPollMs: config.upstreamTasks.maxPollMs,
    timeoutMs: config.upstreamTimeoutMs,
    callbackUrl,
    upstreamAssets: db ? (ids) => upstreamAssetIds(db, ids) : undefined,
    pacer: new ArkRequestPacer((call, method, path) => arkVideoCall(call, method, path, config.upstreamTimeoutMs)),
  });
}
