import type { TaskPrices } from '../../core/prices.ts';
import { paramsOf, type AvatarReviewParams, type ProviderStep, type TaskCall, type TaskProvider, type TaskResult } from '../../core/task-provider.ts';
import { parseReviewUpstream, type ReviewUpstream } from './ark.asset-ids.ts';
import { AssetLibraryError, asReviewError, assetLibrary, assetsCall, type AssetLibrary } from './ark.assets-api.ts';

// Avatar review through ModelArk's asset library: submit makes the upstream group
// (CreateAssetGroup, GroupType AIGC) unless our group already has one, then one CreateAsset per
// asset; the upstream ids are the task's upstream_id (ark.asset-ids.ts reads them back when a video
// names `asset://<ours>`). Polls ask GetAsset for each asset until none is Processing, then the task
// ends as a review task does: completed when every asset is Active, else failed with task_failed and
// the passed assets usable. Only passed assets are billed, as the simulator does.

/** The library's limit on Name (CreateAssetGroup, CreateAsset): 64 characters. */
const NAME_MAX = 64;
const clip = (value: string) => [...value].slice(0, NAME_MAX).join('');

export interface OurGroup {
  name: string;
  description: string | null;
  /** The upstream group an earlier review made for it, if any. */
  upstream?: string;
}

export interface ArkAvatarOptions {
  pricing: TaskPrices;
  pollMs: number;
  timeoutMs: number;
  /** Our group, with the upstream group an earlier review recorded. */
  group(ourGroupId: string): Promise<OurGroup | undefined>;
}

type Asset = AvatarReviewParams['assets'][number];

export class ArkAvatar implements TaskProvider {
  constructor(private readonly options: ArkAvatarOptions) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const params = paramsOf(call, 'avatar');
    const library = assetLibrary(call.channel);
    const project = String(params.project_name ?? 'default');
    try {
      const group = await this.upstreamGroup(library, params.group_id, project);
      const assets: ReviewUpstream['assets'] = {};
      for (const asset of params.assets ?? []) {
        assets[asset.asset_id] = await this.createAsset(library, group, asset, String(params.asset_type ?? 'Image'), project);
      }
      const upstream: ReviewUpstream = { group, assets };
      return { state: 'pending', upstreamId: JSON.stringify(upstream), pollAt: Date.now() + this.options.pollMs, progress: 10 };
    } catch (err) {
      throw asReviewError(err);
    }
  }

  async poll(call: TaskCall): Promise<ProviderStep> {
    const upstream = parseReviewUpstream(call.task.upstream_id);
    if (!upstream) return { state: 'failed', code: 'upstream_error', message: 'The review has no upstream asset ids' };
    const library = assetLibrary(call.channel);
    const params = paramsOf(call, 'avatar');
    const project = String(params.project_name ?? 'default');
    const assets = params.assets ?? [];
    let states: { status: string; code?: string }[];
    try {
      states = await Promise.all(assets.map((a) => this.assetState(library, upstream.assets[a.asset_id] ?? null, project)));
    } catch (err) {
      throw asReviewError(err);
    }
    const decided = states.filter((s) => s.status !== 'Processing').length;
    if (decided < assets.length) return { state: 'pending', pollAt: Date.now() + this.options.pollMs, progress: 10 + Math.floor((80 * decided) / Math.max(1, assets.length)) };
    return this.outcome(call, assets, states);
  }

  private outcome(call: TaskCall, assets: Asset[], states: { status: string; code?: string }[]): ProviderStep {
    const entries = assets.map((a, i) => ({ asset_id: a.asset_id, asset_url: `asset://${a.asset_id}`, status: states[i]!.status === 'Active' ? ('Active' as const) : ('Failed' as const) }));
    const usable = entries.filter((e) => e.status === 'Active');
    const failed = entries.filter((e) => e.status === 'Failed');
    const result: TaskResult = { assets: entries, usable_assets: usable, failed_assets: failed, asset_url: (usable[0] ?? entries[0])?.asset_url, group_id: paramsOf(call, 'avatar').group_id };
    const billedUnits = (call.prices ?? this.options.pricing).perAssetUnits(call.task.model) * usable.length;
    if (failed.length === 0) return { state: 'completed', result, billedUnits };
    const why = assets
      .map((a, i) => (entries[i]!.status === 'Failed' ? `${a.name}${states[i]!.code ? ` (${states[i]!.code})` : ''}` : undefined))
      .filter(Boolean)
      .join(', ');
    return { state: 'failed', code: 'task_failed', message: `${failed.length} of ${entries.length} asset${entries.length === 1 ? '' : 's'} failed review: ${why}`, result, billedUnits };
  }

  private async upstreamGroup(library: AssetLibrary, ourGroupId: string, project: string): Promise<string> {
    const ours = await this.options.group(ourGroupId);
    if (ours?.upstream) return ours.upstream;
    const body: Record<string, unknown> = { Name: clip(ours?.name ?? ourGroupId), GroupType: 'AIGC', ProjectName: project };
    if (ours?.description) body.Description = [...ours.description].slice(0, 300).join('');
    const created = await assetsCall(library, 'CreateAssetGroup', body, this.options.timeoutMs);
    if (typeof created?.Id !== 'string' || !created.Id) throw new Error('CreateAssetGroup answered without an Id');
    return created.Id;
  }

  /** The upstream asset id, or null when the library refused this asset (it then fails review). */
  private async createAsset(library: AssetLibrary, group: string, asset: Asset, type: string, project: string): Promise<string | null> {
    try {
      const created = await assetsCall(library, 'CreateAsset', { GroupId: group, URL: asset.url, Name: clip(asset.name), AssetType: type, ProjectName: project }, this.options.timeoutMs);
      if (typeof created?.Id !== 'string' || !created.Id) throw new Error('CreateAsset answered without an Id');
      return created.Id;
    } catch (err) {
      // A 400 names this asset (its URL, its type); anything else concerns the whole review.
      if (err instanceof AssetLibraryError && err.status === 400 && err.code) return null;
      throw err;
    }
  }

  private async assetState(library: AssetLibrary, id: string | null, project: string): Promise<{ status: string; code?: string }> {
    if (!id) return { status: 'Failed', code: 'CreateAssetRefused' };
    try {
      const asset = await assetsCall(library, 'GetAsset', { Id: id, ProjectName: project }, this.options.timeoutMs);
      const status = String(asset?.Status ?? '');
      if (status === 'Active') return { status };
      if (status === 'Failed') return { status, code: typeof asset?.Error?.Code === 'string' ? asset.Error.Code : undefined };
      return { status: 'Processing' };
    } catch (err) {
      // The library no longer knows it (deleted there): it cannot be used, so it did not pass.
      if (err instanceof AssetLibraryError && err.status === 404) return { status: 'Failed', code: err.code || 'NotFound' };
      throw err;
    }
  }
}
