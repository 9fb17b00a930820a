// What an avatar review left behind that a later task's provider needs: an upstream that keeps its own
// asset and group ids (ModelArk's asset library) reads them back from the task that reviewed ours.
// The avatars repository answers; the provider parses what it stored in those tasks' upstream_id.

export interface ReviewedAssets {
  /** Our group's name and description, and the upstream_id of tasks that reviewed its assets. */
  group(ourGroupId: string): Promise<{ name: string; description: string | null; reviewUpstreams: (string | null)[] } | undefined>;
  /** For each of our asset ids, the upstream_id of the task that reviewed it. */
  reviewUpstreams(ourAssetIds: string[]): Promise<{ id: string; upstream: string | null }[]>;
}
