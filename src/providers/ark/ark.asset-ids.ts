import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

// Where our asset ids meet ModelArk's: an avatar review task reviewed through the asset library keeps
// the upstream's group and asset ids as its upstream_id (JSON below), written with its hand-over.
// A video submit maps `asset://<ours>` to `asset://<theirs>` from there; no other table is needed.

export interface ReviewUpstream {
  group: string;
  /** Our asset id -> the upstream's (null: CreateAsset refused it, so it failed review). */
  assets: Record<string, string | null>;
}

export function parseReviewUpstream(value: string | null): ReviewUpstream | undefined {
  if (!value?.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(value) as ReviewUpstream;
    return typeof parsed.group === 'string' && typeof parsed.assets === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export async function upstreamAssetIds(db: Kysely<Database>, ourIds: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (ourIds.length === 0) return found;
  const rows = await db
    .selectFrom('assets')
    .innerJoin('tasks', 'tasks.id', 'assets.task_id')
    .select(['assets.id as id', 'tasks.upstream_id as upstream'])
    .where('assets.id', 'in', ourIds)
    .execute();
  for (const row of rows) {
    const theirs = parseReviewUpstream(row.upstream)?.assets[row.id];
    if (theirs) found.set(row.id, theirs);
  }
  return found;
}

/** The upstream group an earlier review made for our group, if one did. */
export async function upstreamGroupId(db: Kysely<Database>, ourGroupId: string): Promise<string | undefined> {
  const rows = await db
    .selectFrom('assets')
    .innerJoin('tasks', 'tasks.id', 'assets.task_id')
    .select('tasks.upstream_id as upstream')
    .where('assets.group_id', '=', ourGroupId)
    .where('tasks.upstream_id', 'is not', null)
    .limit(50)
    .execute();
  for (const row of rows) {
    const group = parseReviewUpstream(row.upstream)?.group;
    if (group) return group;
  }
  return undefined;
}
