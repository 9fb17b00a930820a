import { countText } from '../../lib/tokens/token-count.ts';
import type { RenderSpec } from '../../core/task-provider.ts';
import type { TaskPrices } from '../../core/prices.ts';
import type { ImageParams } from '../../core/task-params.ts';
import type { VideoParams } from '../../core/task-params.ts';
import { paramsOf, type AnyKindParams, type AvatarReviewParams, type ProducedResult, type ProviderStep, type ResultPart, type TaskCall, type TaskProvider, type TaskResult } from '../../core/task-provider.ts';
import { parseDirectives } from './directives.ts';
import { imageOutput, videoOutput } from './outputs.ts';

// The embedded upstream: no network, deterministic. It takes `latencyMs` (or `[sim:delay=s]`) to
// finish, then answers with render parameters: the engine signs links over them, and the files are
// rendered into the store on their first download.

export interface SimulatorOptions {
  latencyMs: number;
  pricing: TaskPrices;
}

export class SimulatorProvider implements TaskProvider {
  constructor(private readonly options: SimulatorOptions) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const directives = parseDirectives(promptOf(call), ...reviewedNames(call));
    const etaAt = Date.now() + (directives.delayMs ?? this.options.latencyMs);
    return { state: 'pending', etaAt, pollAt: etaAt };
  }

  async poll(call: TaskCall): Promise<ProviderStep> {
    const etaAt = call.task.eta_at ?? 0;
    if (Date.now() < etaAt) return { state: 'pending', pollAt: etaAt };
    const directives = parseDirectives(promptOf(call), ...reviewedNames(call));
    if (directives.fail) {
      return { state: 'failed', code: directives.fail, message: `The simulated upstream failed the task (${directives.fail})` };
    }
    if (call.task.kind === 'avatar') return this.review(call);
    return call.task.kind === 'video' ? this.video(call) : this.images(call);
  }

  // Avatar review: every asset passes unless its name or URL carries [sim:reject].
  // Only the assets that passed are billed.
  private review(call: TaskCall): ProviderStep {
    const params = paramsOf(call, 'avatar');
    const assets = params.assets ?? [];
    const entries = assets.map((a) => ({
      asset_id: a.asset_id,
      asset_url: `asset://${a.asset_id}`,
      status: parseDirectives(a.name, a.url).reject ? ('Failed' as const) : ('Active' as const),
    }));
    const usable = entries.filter((e) => e.status === 'Active');
    const failed = entries.filter((e) => e.status === 'Failed');
    const result: TaskResult = {
      assets: entries,
      usable_assets: usable,
      failed_assets: failed,
      asset_url: (usable[0] ?? entries[0])?.asset_url,
      group_id: params.group_id,
    };
    const billedUnits = (call.prices ?? this.options.pricing).perAssetUnits(call.task.model) * usable.length;
    if (failed.length === 0) return { state: 'completed', result, billedUnits };
    const message = `${failed.length} of ${entries.length} asset${entries.length === 1 ? '' : 's'} failed review`;
    return { state: 'failed', code: 'task_failed', message, result, billedUnits };
  }

  private images(call: TaskCall): ProviderStep {
    const { task } = call;
    const params = paramsOf(call, 'image');
    const out = imageOutput(task.model, params);
    const parts = Array.from({ length: out.n }, (_, i) =>
      render({ k: 'image', w: out.width, h: out.height, f: out.format, q: out.compression, s: `${task.id}:${i}`, t: out.transparent }),
    );
    const result: ProducedResult = { images: [{ url: parts }] };
    const prices = call.prices ?? this.options.pricing;
    if (!prices.isPerToken(task.model)) return { state: 'completed', result };
    // Per-token models settle what was really used: the prompt's tokens and each image's tokens.
    const usage = {
      inputTokens: countText(String(params.prompt ?? '')),
      outputTokens: out.n * prices.outputTokensPerImage(task.model),
    };
    return { state: 'completed', result, usage };
  }

  private video(call: TaskCall): ProviderStep {
    const { task } = call;
    const params = paramsOf(call, 'video');
    const out = videoOutput(task.model, params);
    const seed = `${task.id}:0`;
    const video: NonNullable<ProducedResult['videos']>[number] = {
      url: [render({ k: 'video', w: out.width, h: out.height, d: out.duration, s: seed, a: out.audio })],
      duration: out.duration,
      resolution: out.resolution,
    };
    if (out.lastFrame) video.last_frame_url = render({ k: 'frame', w: out.width, h: out.height, d: out.duration, s: seed });
    const result: ProducedResult = { videos: [video] };
    // Reviewed avatar assets are used as they are: no second review.
    const assets = referencedAssets(params);
    if (assets.length > 0) result.reference_assets = assets.map((id) => ({ asset_id: id, reviewed: true, reviewed_again: false }));
    return { state: 'completed', result };
  }
}

const render = (spec: RenderSpec): ResultPart => ({ render: spec });

// Directives are read the same way whatever the task's kind: a field the kind lacks reads as absent.
const anyKind = (call: TaskCall): AnyKindParams => call.params;
const promptOf = (call: TaskCall) => anyKind(call).prompt;

function reviewedNames(call: TaskCall): string[] {
  return (anyKind(call).assets ?? []).map((a) => `${a.name} ${a.url}`);
}

function referencedAssets(params: VideoParams): string[] {
  const urls: string[] = [
    ...(params.image_urls ?? []),
    ...(params.video_urls ?? []),
    ...(params.audio_urls ?? []),
    ...(params.image_with_roles ?? []).map((r) => r.url),
  ];
  return urls.filter((u) => u.startsWith('asset://')).map((u) => u.slice('asset://'.length));
}
