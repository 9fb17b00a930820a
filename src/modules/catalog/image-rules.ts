import { badRequest } from '../../core/errors.ts';
import type { ImageRequest } from '../images/images.schemas.ts';
import type { ImageParams } from '../../core/task-params.ts';
import { DEFAULT_IMAGE_MODEL, IMAGE_QUALITIES, resolveModel, type ImageModel } from '../../core/catalog/models.ts';
import { imagePixelSize } from '../../core/catalog/pixels.ts';
import { atMost, atMostCharacters, inRange, lower, mediaUrl, oneOf } from './rule-kit.ts';


const PROMPT_MAX = 32_000;
const PIXEL_SIZE = /^(\d{2,5})x(\d{2,5})$/;
// <w>x<h> sizes (imggen-2-official): each side 256-3840 and a multiple of 16, at most 3840x2160's pixels.
const FREE_SIDE = [256, 3840] as const;
const FREE_MAX_PIXELS = 3840 * 2160;

function size(model: ImageModel, requested: string | undefined, resolution: string) {
  const value = requested ?? '1:1';
  const pixels = PIXEL_SIZE.exec(value);
  if (model.freeSize && pixels) {
    const [width, height] = [Number(pixels[1]), Number(pixels[2])];
    for (const side of [width, height]) {
      if (side < FREE_SIDE[0] || side > FREE_SIDE[1] || side % 16 !== 0) {
        throw badRequest(`size: each side must be a multiple of 16 from ${FREE_SIDE[0]} to ${FREE_SIDE[1]} (got ${value})`);
      }
    }
    if (width * height > FREE_MAX_PIXELS) throw badRequest(`size: at most ${FREE_MAX_PIXELS} pixels (got ${value})`);
    return { size: value, width, height };
  }
  // `auto` lets the server pick; it picks 1:1.
  const ratio = model.freeSize && value === 'auto' ? '1:1' : oneOf('size', value, model.ratios);
  return { size: ratio, ...imagePixelSize(ratio, resolution) };
}

function resolution(model: ImageModel, requested: string | undefined): string {
  const value = lower(requested) ?? model.defaultResolution;
  // imglite-3.1 makes only 1K: other tiers are quietly produced at 1K.
  if (model.downgraded.includes(value)) return model.defaultResolution;
  return oneOf('resolution', value, model.resolutions);
}

/** Applies every image rule of the chosen model; returns the complete parameter set. */
export function normalizeImageRequest(body: ImageRequest): ImageParams {
  const model = resolveModel(body.model ?? DEFAULT_IMAGE_MODEL);
  if (!model) throw badRequest(`model: unknown model "${body.model}"`);
  if (model.kind !== 'image') throw badRequest(`model: ${model.id} is a video model; use /v1/videos/generations`);
  if (body.prompt.trim() === '') throw badRequest('prompt must not be empty');
  atMostCharacters('prompt', body.prompt, PROMPT_MAX);
  const res = resolution(model, body.resolution);
  const n = body.n === undefined ? 1 : inRange('n', body.n, model.n[0], model.n[1]);
  const outputFormat = oneOf('output_format', body.output_format ?? 'png', model.formats);
  if (body.output_compression !== undefined) {
    if (outputFormat === 'png') throw badRequest('output_compression applies only to jpeg and webp output');
    inRange('output_compression', body.output_compression, 0, 100);
  }
  atMost('image_urls', body.image_urls, model.maxReferences);
  body.image_urls?.forEach((url, i) => mediaUrl(`image_urls[${i}]`, url, { allowAsset: false, allowData: true }));
  const params: ImageParams = { model: model.id, prompt: body.prompt, ...size(model, body.size, res), resolution: res, n, output_format: outputFormat };
  if (body.output_format !== undefined) params.format_asked = true;
  if (body.output_compression !== undefined) params.output_compression = body.output_compression;
  if (body.image_urls?.length) params.image_urls = body.image_urls;
  if (model.official) Object.assign(params, officialFields(body));
  return params;
}

// Fields only imggen-2-official takes.
function officialFields(body: ImageRequest) {
  const background = oneOf('background', body.background ?? 'auto', ['auto', 'opaque', 'transparent']);
  const out: Partial<ImageParams> = {
    quality: oneOf('quality', body.quality ?? 'auto', IMAGE_QUALITIES),
    // Transparent backgrounds are not offered: silently produced as `auto`.
    background: background === 'transparent' ? 'auto' : background,
    moderation: oneOf('moderation', body.moderation ?? 'auto', ['auto', 'low']),
  };
  if (body.mask_url !== undefined) {
    if (!body.image_urls?.length) throw badRequest('mask_url must be sent together with image_urls');
    mediaUrl('mask_url', body.mask_url, { allowAsset: false, allowData: true });
    out.mask_url = body.mask_url;
  }
  return out;
}
