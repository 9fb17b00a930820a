import { resolveModel } from '../../core/catalog/models.ts';
import type { VideoParams } from '../../core/task-params.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';

// Our normalized video parameters (modules/catalog/video-rules.ts) as a ModelArk create body: the
// prompt and every reference become content[] items with ModelArk's roles; `size` / `aspect_ratio`
// (stored as `ratio`), `camerafixed`, `audio` / `generate_audio` become its top-level fields.

type Item =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string }; role?: string }
  | { type: 'video_url'; video_url: { url: string }; role: 'reference_video' }
  | { type: 'audio_url'; audio_url: { url: string }; role: 'reference_audio' };

export interface BodyExtras {
  /** Our asset ids -> the upstream's: `asset://<ours>` is sent as `asset://<theirs>`. */
  assets: Map<string, string>;
  callbackUrl?: string;
  watermark?: unknown;
}

export function arkVideoBody(params: VideoParams, upstreamModel: string, extras: BodyExtras): Record<string, unknown> {
  const model = resolveModel(params.model);
  const family = model?.kind === 'video' ? model.family : undefined;
  const url = (value: string) => {
    if (!value.startsWith('asset://')) return value;
    const theirs = extras.assets.get(value.slice('asset://'.length));
    // The submit checked the asset is Active; one without an upstream id was reviewed elsewhere.
    if (!theirs) throw new AssetNotAtUpstream(value);
    return `asset://${theirs}`;
  };
  const content: Item[] = [];
  if (params.prompt) content.push({ type: 'text', text: params.prompt });
  const images: string[] = params.image_urls ?? [];
  images.forEach((u, i) => {
    // 2.0: plain reference images. 1.5: one image is the first frame, a second the last.
    const role = family === '2.0' ? 'reference_image' : i === 0 ? 'first_frame' : 'last_frame';
    content.push({ type: 'image_url', image_url: { url: url(u) }, role });
  });
  for (const entry of params.image_with_roles ?? []) {
    content.push({ type: 'image_url', image_url: { url: url(entry.url) }, role: entry.role });
  }
  for (const u of params.video_urls ?? []) content.push({ type: 'video_url', video_url: { url: url(u) }, role: 'reference_video' });
  for (const u of params.audio_urls ?? []) content.push({ type: 'audio_url', audio_url: { url: url(u) }, role: 'reference_audio' });
  const body: Record<string, unknown> = {
    model: upstreamModel,
    content,
    ratio: params.ratio,
    resolution: params.resolution,
    duration: params.duration,
  };
  if (params.seed !== undefined) body.seed = params.seed;
  if (params.camerafixed !== undefined) body.camera_fixed = params.camerafixed;
  // The 1.0 models make no audio; the others take generate_audio.
  if (family !== '1.0') body.generate_audio = params.audio;
  body.return_last_frame = params.return_last_frame === true;
  body.watermark = extras.watermark === true;
  if (params.tools?.length) body.tools = params.tools.map((t) => ({ type: t.type }));
  if (extras.callbackUrl) body.callback_url = extras.callbackUrl;
  return body;
}

/** Fails the task (and refunds it) rather than retrying: no retry can make the asset appear. */
export class AssetNotAtUpstream extends UpstreamRejected {
  constructor(readonly assetUrl: string) {
    super('upstream_error', `${assetUrl} has no copy at this ModelArk account (it was reviewed through another channel)`);
  }
}
