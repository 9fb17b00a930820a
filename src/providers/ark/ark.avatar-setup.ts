import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/types.ts';
import type { Pricing } from '../../modules/billing/pricing.ts';
import { upstreamGroupId } from './ark.asset-ids.ts';
import { ArkAvatar } from './ark.avatar.ts';

/** The avatar-review provider of an ark channel, reading our groups (and their upstream ids) from the database. */
export function arkAvatar(config: Readonly<Config>, pricing: Pricing, db: Kysely<Database> | undefined): ArkAvatar {
  return new ArkAvatar({
    pricing,
    pollMs: config.upstreamTasks.pollMs,
    timeoutMs: config.upstreamTimeoutMs,
    async group(ourGroupId) {
      if (!db) return undefined;
      const row = await db.selectFrom('asset_groups').select(['name', 'description']).where('id', '=', ourGroupId).executeTakeFirst();
      if (!row) return undefined;
      return { name: row.name, description: row.description, upstream: await upstreamGroupId(db, ourGroupId) };
    },
  });
}
