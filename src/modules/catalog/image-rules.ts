import { badRequest } from '../../core/errors.ts';
import type { ImageRequest } from '../images/images.schemas.ts';
import type { ImageParams } from '../../core/task-params.ts';
import { DEFAULT_IMAGE_MODEL, IMAGE_QUALITIES, resolveModel, type ImageModel } from '../../core/catalog/models.ts';
import { imagePixelSize, imageTierOf } from '../../core/catalog/pixels.ts';
import { atMost, atMostCharacters, inRange, lower, mediaUrl, oneOf } from './rule-kit.ts';


const PROMPT_MAX = 32_000;
const PIXEL_SIZE = /^(\d{2,5})x(\d{2,5})$/;
// <w>x<h> sizes (imggen-2-official): each side 256-3840 and a multiple of 16, at most 3840x2160's pixels.
const FREE_SIDE = [256, 3840] as const;
const FREE_MAX_PIXELS = 3840 * 2160;

// A pixel size is billed at the tier its pixel count falls in, whatever `resolution` says: the caller
// pays for the image that is made. A `resolution` of another tier contradicts the size and is refused.
function pixelSize(model: ImageModel, value: string, width: number, height: number, asked: string | undefined) {
  for (const side of [width, height]) {
    if (side < FREE_SIDE[0] || side > FREE_SIDE[1] || side % 16 !== 0) {
      throw badRequest(`size: each side must be a multiple of 16 from ${FREE_SIDE[0]} to ${FREE_SIDE[1]} (got ${value})`);
    }
  }
  const tier = width * height <= FREE_MAX_PIXELS ? imageTierOf(width * height, model.resolutions) : undefined;
  if (!tier) throw badRequest(`size: at most ${FREE_MAX_PIXELS} pixels (got ${value})`);
  if (asked !== undefined && asked !== tier) {
    throw badRequest(`size ${value} is a ${tier} image (${width * height} pixels), but resolution is "${asked}": leave resolution out or send ${tier}`);
  }
  return { size: value, width, height, resolution: tier };
}

function size(model: ImageModel, requested: string | undefined, requestedResolution: string | undefined) {
  const value = requested ?? '1:1';
  const pixels = PIXEL_SIZE.exec(value);
  if (model.freeSize && pixels) return pixelSize(model, value, Number(pixels[1]), Number(pixels[2]), requestedResolution);
  const res = requestedResolution ?? model.defaultResolution;
  // `auto` lets the server pick; it picks 1:1.
  const ratio = model.freeSize && value === 'auto' ? '1:1' : oneOf('size', value, model.ratios);
  return { size: ratio, ...imagePixelSize(ratio, res), resolution: res };
}

/** The resolution as asked (checked), or undefined when the caller sent none. */
function resolution(model: ImageModel, requested: string | undefined): string | undefined {
  const value = lower(requested);
  if (value === undefined) return undefined;
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
  const params: ImageParams = { model: model.id, prompt: body.prompt, ...size(model, body.size, res), n, output_format: outputFormat };
  if (body.output_format !== undefined) params.format_asked = true;
  if (body.output_compression !== undefined) params.output_compression = body.output_compression;
  if (body.image_urls?.length) params.image_urls = body.image_urls;
  // Checked whatever the model: a value no model takes is a 400 naming its field, never quietly
  // dropped; the other models ignore a valid one (their price has no quality).
  const official = officialFields(body);
  if (model.official) Object.assign(params, official);
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
