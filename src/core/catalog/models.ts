// The model catalogue as data. Rules the public model list leaves open are decided here, once:
// - Resolution strings are case-insensitive and normalized to lower case (`2K` == `2k`).
// - `imgflash` is "equivalent to imgflash-3.1-preview-official"; that name is accepted as an alias too.
// - n: 1-4 unless a model has its own range; `imgart-5-0-pro` makes one image per call, so only n = 1.
// - Ratios: the imggen-2 family takes its 15 ratios; imgart, imgpro and imglite take the ten common
//   ratios; imgflash adds its extreme ratios 1:4, 4:1, 1:8, 8:1.
// - Output formats: png/jpeg/webp, except imgart (png/jpeg).
// - Reference images: imgart-5-0-lite and imgpro-3-preview, not given, take 10 and 14.
// - Video `seed` takes -1 to 2^32-1 on every family, 2.0 included.
// - 1080p is open to all three 2.0 models; 4k only to vidgen-2.0.
// - `adaptive` renders at 16:9 in the simulator, which does not look at reference media.
// - The 1.0 models take no `image_urls` (they take images only as image_with_roles) and no audio: sending
//   them is a 400 rather than a silent text-only video.
import type { ImageFormat } from '../task-params.ts';

export type { ImageFormat };

const IMGGEN_RATIOS = ['1:1', '3:2', '2:3', '4:3', '3:4', '5:4', '4:5', '16:9', '9:16', '2:1', '1:2', '3:1', '1:3', '21:9', '9:21'];
const COMMON_RATIOS = ['1:1', '3:2', '2:3', '4:3', '3:4', '5:4', '4:5', '16:9', '9:16', '21:9'];
export const VIDEO_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];

export interface ImageModel {
  kind: 'image';
  id: string;
  aliases: string[];
  ratios: string[];
  /** `auto` and `<w>x<h>` sizes (imggen-2-official). */
  freeSize: boolean;
  resolutions: string[];
  defaultResolution: string;
  /** Resolutions accepted but produced at `defaultResolution` (imglite-3.1). */
  downgraded: string[];
  n: [number, number];
  maxReferences: number;
  formats: ImageFormat[];
  /** Result links live this long; undefined = RESULT_TTL_HOURS. */
  resultTtlHours?: number;
  /** imggen-2-official's own fields: quality, background, moderation, mask_url. */
  official: boolean;
  /** Billed by the tokens its upstream counts (a per_token price), not per image (per_image). */
  perToken: boolean;
}

export interface VideoModel {
  kind: 'video';
  id: string;
  aliases: string[];
  family: '2.0' | '1.5' | '1.0';
  duration: [number, number];
  /** The ratio field: `size` on 2.0, `aspect_ratio` on 1.x. */
  ratioField: 'size' | 'aspect_ratio';
  ratios: string[];
  resolutions: string[];
  defaultResolution: string;
  /** Prompt cap in characters; null = none (vidgen-2.0-mini). */
  promptMax: number | null;
  assetUrls: boolean;
  roles: string[];
}

const image = (m: Omit<ImageModel, 'kind' | 'aliases' | 'downgraded' | 'official' | 'freeSize' | 'perToken'> & Partial<ImageModel>): ImageModel => ({
  kind: 'image',
  aliases: [],
  downgraded: [],
  official: false,
  freeSize: false,
  perToken: false,
  ...m,
});

const video2 = (id: string, resolutions: string[], promptMax: number | null, assetUrls: boolean): VideoModel => ({
  kind: 'video',
  id,
  aliases: [],
  family: '2.0',
  duration: [4, 15],
  ratioField: 'size',
  ratios: [...VIDEO_RATIOS, 'adaptive'],
  resolutions,
  defaultResolution: '720p',
  promptMax,
  assetUrls,
  roles: ['first_frame', 'last_frame', 'reference_image'],
});

const video1 = (id: string, family: '1.5' | '1.0', duration: [number, number], defaultResolution: string, roles: string[]): VideoModel => ({
  kind: 'video',
  id,
  aliases: [],
  family,
  duration,
  ratioField: 'aspect_ratio',
  ratios: VIDEO_RATIOS,
  resolutions: ['480p', '720p', '1080p'],
  defaultResolution,
  promptMax: null,
  assetUrls: false,
  roles,
});

export const MODELS: (ImageModel | VideoModel)[] = [
  video2('vidgen-2.0', ['480p', '720p', '1080p', '4k'], 4000, true),
  video2('vidgen-2.0-fast', ['480p', '720p', '1080p'], 4000, true),
  video2('vidgen-2.0-mini', ['480p', '720p', '1080p'], null, false),
  video1('vidgen-1-5-pro', '1.5', [4, 12], '720p', ['first_frame', 'last_frame']),
  video1('vidgen-1-0-pro-fast', '1.0', [2, 12], '1080p', ['first_frame']),
  video1('vidgen-1-0-pro-quality', '1.0', [2, 12], '1080p', ['first_frame', 'last_frame']),
  image({ id: 'imggen-2-official', ratios: IMGGEN_RATIOS, freeSize: true, resolutions: ['1k', '2k', '4k'], defaultResolution: '1k', n: [1, 4], maxReferences: 16, formats: ['png', 'jpeg', 'webp'], official: true }),
  image({ id: 'imggen-2', aliases: ['imggen-2-ext'], ratios: IMGGEN_RATIOS, resolutions: ['1k', '2k', '4k'], defaultResolution: '1k', n: [1, 4], maxReferences: 16, formats: ['png', 'jpeg', 'webp'] }),
  image({ id: 'imgart-5-0-pro', ratios: COMMON_RATIOS, resolutions: ['1k', '2k'], defaultResolution: '1k', n: [1, 1], maxReferences: 10, formats: ['png', 'jpeg'], resultTtlHours: 72 }),
  image({ id: 'imgart-5-0-lite', ratios: COMMON_RATIOS, resolutions: ['2k', '3k'], defaultResolution: '2k', n: [1, 4], maxReferences: 10, formats: ['png', 'jpeg'], resultTtlHours: 72 }),
  image({ id: 'imgflash-3.1-preview', aliases: ['imgflash-ext', 'imgflash', 'imgflash-3.1-preview-official'], ratios: [...COMMON_RATIOS, '1:4', '4:1', '1:8', '8:1'], resolutions: ['1k', '2k', '4k'], defaultResolution: '1k', n: [1, 4], maxReferences: 14, formats: ['png', 'jpeg', 'webp'] }),
  image({ id: 'imgpro-3-preview', aliases: ['imgpro-ext'], ratios: COMMON_RATIOS, resolutions: ['1k', '2k'], defaultResolution: '1k', n: [1, 4], maxReferences: 14, formats: ['png', 'jpeg', 'webp'], resultTtlHours: 24 }),
  image({ id: 'imglite-3.1', aliases: ['imglite'], ratios: COMMON_RATIOS, resolutions: ['1k'], defaultResolution: '1k', downgraded: ['2k', '4k', '0.5k'], n: [1, 4], maxReferences: 14, formats: ['png', 'jpeg', 'webp'], perToken: true }),
];

/** The `quality` values an official model takes (imggen-2-official); its price may differ by them. */
export const IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high'] as const;

export const DEFAULT_IMAGE_MODEL = 'imggen-2-official';

const byName = new Map<string, ImageModel | VideoModel>();
for (const model of MODELS) for (const name of [model.id, ...model.aliases]) byName.set(name, model);

/** The catalogue entry for an identifier or alias. */
export function resolveModel(name: string): ImageModel | VideoModel | undefined {
  return byName.get(name);
}

/** The model that reviews avatar assets; named in the avatar receipt. */
export const AVATAR_REVIEW_MODEL = 'vidgen-2.0-avatar-review';

/** What a model is: a catalogue image or video model, the avatar review model, or (any other name) text. */
export const modelKind = (id: string): 'text' | 'image' | 'video' | 'avatar' => (id === AVATAR_REVIEW_MODEL ? 'avatar' : (byName.get(id)?.kind ?? 'text'));

/** Text models the simulator serves (text model names are free-form; these are ours). */
export const TEXT_MODELS = ['textgen-2.5-pro', 'textgen-2.5-flash', 'chatgen-4-sonnet', 'chatgen-4-haiku'];

/**
 * The most prompt tokens each text model takes (its context window; the vendor's input limit): a
 * longer prompt is a 400 before any money moves. Ours stand for the vendor models their prices
 * follow: the 2.5 Pro and Flash models take 1,048,576 input tokens, the Sonnet 4 and Haiku models
 * 200,000. A model an operator adds under another name gets the largest window in common use, so
 * the gateway never refuses what its upstream would take; the upstream refuses past its own.
 */
const CONTEXT_WINDOWS = new Map([
  ['textgen-2.5-pro', 1_048_576],
  ['textgen-2.5-flash', 1_048_576],
  ['chatgen-4-sonnet', 200_000],
  ['chatgen-4-haiku', 200_000],
]);
export const DEFAULT_CONTEXT_WINDOW = 1_048_576;

export const contextWindow = (model: string): number => CONTEXT_WINDOWS.get(model) ?? DEFAULT_CONTEXT_WINDOW;

export function allModelIds(): string[] {
  return [...MODELS.map((m) => m.id), AVATAR_REVIEW_MODEL, ...TEXT_MODELS];
}

export function resultTtlSeconds(modelId: string): number | undefined {
  const model = byName.get(modelId);
  return model?.kind === 'image' && model.resultTtlHours ? model.resultTtlHours * 3600 : undefined;
}
