import { badRequest } from '../../core/errors.ts';
import type { VideoRequest } from '../videos/videos.schemas.ts';
import type { VideoParams } from '../../core/task-params.ts';
import { resolveModel, VIDEO_RATIOS, type VideoModel } from '../../core/catalog/models.ts';
import { videoPixelSize } from '../../core/catalog/pixels.ts';
import { assetId, atMost, atMostCharacters, inRange, lower, mediaUrl, notTogether, oneOf } from './rule-kit.ts';


export interface NormalizedVideo {
  params: VideoParams;
  /** Asset ids referenced through asset:// URLs; the caller checks they exist and are usable. */
  assetIds: string[];
}

const SEED: [number, number] = [-1, 2 ** 32 - 1];
const LIMITS = { '2.0': { images: 9, videos: 3, audios: 3 }, '1.5': { images: 2, videos: 0, audios: 0 }, '1.0': { images: 0, videos: 0, audios: 0 } };

function references(model: VideoModel, body: VideoRequest, assetIds: string[]) {
  const allowAsset = model.assetUrls;
  const limits = LIMITS[model.family];
  const check = (field: string, urls: string[] | undefined, max: number) => {
    if (!urls) return;
    if (max === 0 && urls.length > 0) throw badRequest(`${field} is not supported by ${model.id}`);
    atMost(field, urls, max);
    urls.forEach((url, i) => {
      mediaUrl(`${field}[${i}]`, url, { allowAsset });
      const id = assetId(url);
      if (id) assetIds.push(id);
    });
  };
  // One way of passing images at a time.
  notTogether('image_urls', 'image_with_roles', Boolean(body.image_urls && body.image_with_roles));
  check('image_urls', body.image_urls, limits.images);
  check('video_urls', body.video_urls, limits.videos);
  check('audio_urls', body.audio_urls, limits.audios);
  const roles = body.image_with_roles ?? [];
  atMost('image_with_roles', roles, model.family === '2.0' ? 9 : 2);
  roles.forEach((entry, i) => {
    oneOf(`image_with_roles[${i}].role`, entry.role, model.roles);
    mediaUrl(`image_with_roles[${i}].url`, entry.url, { allowAsset });
    const id = assetId(entry.url);
    // An asset in image_with_roles is a reference image, not a first or last frame.
    if (id && entry.role !== 'reference_image') throw badRequest(`image_with_roles[${i}].role must be reference_image for an asset URL`);
    if (id) assetIds.push(id);
  });
  const count = (role: string) => roles.filter((r) => r.role === role).length;
  if (model.family !== '2.0') {
    for (const role of ['first_frame', 'last_frame']) if (count(role) > 1) throw badRequest(`image_with_roles takes at most one ${role}`);
  }
  const framed = count('first_frame') + count('last_frame') > 0;
  // First/last frames exclude reference videos and audio.
  if (framed && (body.video_urls?.length || body.audio_urls?.length)) {
    throw badRequest('video_urls and audio_urls are unavailable when image_with_roles uses first_frame or last_frame');
  }
  return { framed, hasImages: Boolean(body.image_urls?.length || roles.length), hasVideos: Boolean(body.video_urls?.length) };
}

/** Applies every video rule of the chosen model; returns the complete parameter set. */
export function normalizeVideoRequest(body: VideoRequest): NormalizedVideo {
  const model = resolveModel(body.model);
  if (!model) throw badRequest(`model: unknown model "${body.model}"`);
  if (model.kind !== 'video') throw badRequest(`model: ${model.id} is an image model; use /v1/images/generations`);
  const assetIds: string[] = [];
  const refs = references(model, body, assetIds);
  const prompt = body.prompt?.trim() ? body.prompt : undefined;
  // 2.0: a prompt is needed for text-to-video only; 1.x always need one.
  const promptNeeded = model.family !== '2.0' || !(refs.hasImages || refs.hasVideos);
  if (promptNeeded && !prompt) throw badRequest(`prompt is required${model.family === '2.0' ? ' for text-to-video' : ''}`);
  if (prompt && model.promptMax !== null) atMostCharacters('prompt', prompt, model.promptMax, ` for ${model.id}`);
  const ratio = oneOf(model.ratioField, body[model.ratioField] ?? '16:9', model.ratios);
  // The other family's ratio field is not read for this model; a value no model takes is still a
  // 400 naming it, not a field quietly dropped.
  const otherField = model.ratioField === 'size' ? 'aspect_ratio' : 'size';
  if (body[otherField] !== undefined) oneOf(otherField, body[otherField], otherField === 'size' ? [...VIDEO_RATIOS, 'adaptive'] : VIDEO_RATIOS);
  const resolution = oneOf('resolution', lower(body.resolution) ?? model.defaultResolution, model.resolutions);
  const duration = body.duration === undefined ? 5 : inRange('duration', body.duration, model.duration[0], model.duration[1]);
  if (body.seed !== undefined) inRange('seed', body.seed, SEED[0], SEED[1]);
  if (model.family === '1.0' && body.audio === true) throw badRequest(`audio: ${model.id} does not generate audio`);
  if (model.family === '1.0' && body.image_urls?.length) throw badRequest(`image_urls is not supported by ${model.id}; use image_with_roles`);
  body.tools?.forEach((tool, i) => oneOf(`tools[${i}].type`, tool.type, ['web_search']));
  const audio = model.family === '2.0' ? (body.generate_audio ?? true) : model.family === '1.5' ? (body.audio ?? true) : false;
  const params: VideoParams = {
    model: model.id,
    ...(prompt ? { prompt } : {}),
    duration,
    ratio,
    resolution,
    ...(body.seed !== undefined ? { seed: body.seed } : {}),
    audio,
    return_last_frame: body.return_last_frame ?? false,
    ...(model.family === '1.5' ? { camerafixed: body.camerafixed ?? false } : {}),
    ...(model.family === '2.0' && body.tools ? { tools: body.tools.map((t) => ({ type: t.type })) } : {}),
    ...(body.image_urls?.length ? { image_urls: body.image_urls } : {}),
    ...(body.image_with_roles?.length ? { image_with_roles: body.image_with_roles.map(({ url, role }) => ({ url, role })) } : {}),
    ...(body.video_urls?.length ? { video_urls: body.video_urls } : {}),
    ...(body.audio_urls?.length ? { audio_urls: body.audio_urls } : {}),
    ...videoPixelSize(ratio, resolution),
  };
  return { params, assetIds: [...new Set(assetIds)] };
}
