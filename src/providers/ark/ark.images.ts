import type { TaskPrices } from '../../core/prices.ts';
import type { ImageParams } from '../../core/task-params.ts';
import { parseRatio } from '../../core/catalog/pixels.ts';
import { paramsOf, type ResultPart, type ProviderStep, type TaskCall, type TaskProvider } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import type { SeedreamAnswer } from './ark.answers.ts';
import type { ArkOptions } from './ark.options.ts';
import { arkCall, arkRefusal, isSensitiveCode } from './ark.http.ts';

// Seedream images on ModelArk: POST /api/v3/images/generations answers with the images themselves
// (volcengine-python-sdk, volcenginesdkarkruntime/resources/images/images.py and types/images/images.py).
// `n` above 1 is Seedream's grouped output (sequential_image_generation "auto" with max_images n);
// reference images are URLs (or data: URLs) that ModelArk fetches itself. Its `url` answers are
// 24-hour links: the engine downloads them into our store before the task completes.

/** Our models and the Seedream models they stand for, unless the channel's model_mapping says otherwise. */
export const ARK_IMAGE_MODELS: Record<string, string> = {
  'imgart-5-0-pro': 'seedream-5-0-pro-260628',
  'imgart-5-0-lite': 'seedream-5-0-260128',
};

const TIER_SIDE: Record<string, number> = { '1k': 1024, '2k': 2048, '3k': 3072, '4k': 4096 };

/**
 * Seedream's size as `<w>x<h>`: the tier's pixel count (side squared) at the asked ratio, both sides
 * multiples of 16, never above the tier's pixels. Seedream's own tables follow the same rule (2K
 * 1:1 2048x2048, 4:3 2304x1728), and its minimums (5.0 lite at 2K: 2560x1440's pixels) rule out
 * shrinking wide images the way our square-budget table does.
 */
export function seedreamSize(ratio: string, resolution: string): string {
  const side = TIER_SIDE[resolution.toLowerCase()];
  if (!side) throw new UpstreamRejected('upstream_error', `Seedream makes no ${resolution} images`);
  const [rw, rh] = parseRatio(ratio);
  const area = side * side;
  const width = Math.sqrt((area * rw) / rh);
  const height = area / width;
  let w = Math.round(width / 16) * 16;
  let h = Math.round(height / 16) * 16;
  if (w * h > area) [w, h] = [Math.floor(width / 16) * 16, Math.floor(height / 16) * 16];
  return `${w}x${h}`;
}

export interface ArkImagesDeps {
  pricing: TaskPrices;
  timeoutMs(options: ArkOptions): number;
}

export class ArkImages implements TaskProvider {
  constructor(private readonly deps: ArkImagesDeps) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const { channel, task } = call;
    const params = paramsOf(call, 'image');
    const options = channel.options as ArkOptions;
    const n: number = params.n ?? 1;
    const references: string[] = params.image_urls ?? [];
    const body: Record<string, unknown> = {
      model: call.upstreamModel === task.model ? (ARK_IMAGE_MODELS[task.model] ?? call.upstreamModel) : call.upstreamModel,
      prompt: params.prompt,
      size: seedreamSize(params.size, params.resolution),
      response_format: options.response_format ?? 'url',
      output_format: params.output_format === 'jpeg' ? 'jpeg' : 'png',
      // ModelArk stamps "AI generated" on images unless told not to; the channel decides.
      watermark: options.watermark ?? false,
    };
    if (references.length > 0) body.image = references.length === 1 ? references[0] : references;
    if (n > 1) Object.assign(body, { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: n } });
    const answer = (await arkCall({ channel, method: 'POST', path: '/api/v3/images/generations', body, timeoutMs: this.deps.timeoutMs(options) })) as SeedreamAnswer | null;

    const parts: ResultPart[] = [];
    const errors: { code?: string; message?: string }[] = [];
    for (const item of Array.isArray(answer?.data) ? answer.data : []) {
      if (typeof item?.url === 'string') parts.push({ url: item.url });
      else if (typeof item?.b64_json === 'string') parts.push({ bytes: Buffer.from(item.b64_json, 'base64') });
      else if (item?.error) errors.push(item.error);
    }
    if (parts.length === 0) {
      const why = errors.find((e) => isSensitiveCode(e.code)) ?? errors[0] ?? answer?.error;
      if (why) {
        const refusal = arkRefusal(200, why);
        return { state: 'failed', code: refusal.code, message: refusal.message };
      }
      throw new UpstreamRejected('upstream_error', 'ModelArk answered without an image');
    }
    // A group may come back smaller than asked (the model decides, or some images were refused):
    // the task is charged for the images it got.
    const billedUnits = parts.length < n ? (call.prices ?? this.deps.pricing).imageUnits(task.model, params.resolution, undefined, parts.length) : undefined;
    return { state: 'completed', result: { images: [{ url: parts }] }, ...(billedUnits === undefined ? {} : { billedUnits }) };
  }

  // Every call ends at submit; a task found open here lost its answer with the process that made the call.
  async poll(): Promise<ProviderStep> {
    return { state: 'failed', code: 'upstream_error', message: 'The ModelArk answer was lost before it was stored' };
  }
}
