import type { ReviewedAssets } from '../../core/reviewed-assets.ts';

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

/** ModelArk's ids for our assets, from the reviews that uploaded them. */
export async function upstreamAssetIds(reviewed: ReviewedAssets, ourIds: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (ourIds.length === 0) return found;
  for (const row of await reviewed.reviewUpstreams(ourIds)) {
    const theirs = parseReviewUpstream(row.upstream)?.assets[row.id];
    if (theirs) found.set(row.id, theirs);
  }
  return found;
}

/** The upstream group an earlier review made for our group, if one did. */
export function upstreamGroupId(reviewUpstreams: (string | null)[]): string | undefined {
  for (const upstream of reviewUpstreams) {
    const group = parseReviewUpstream(upstream)?.group;
    if (group) return group;
  }
  return undefined;
}
