// A task's parameters per kind, as the catalogue's rules normalised them at submit and the tasks
// repository reads them back: one type per kind, told apart by the task's kind.

export type TaskKind = 'image' | 'video' | 'avatar';

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface ImageParams {
  model: string;
  prompt: string;
  size: string;
  resolution: string;
  n: number;
  output_format: ImageFormat;
  /** The caller named output_format: an upstream that chooses its own format is then converted to it. */
  format_asked?: true;
  output_compression?: number;
  quality?: string;
  background?: string;
  moderation?: string;
  image_urls?: string[];
  mask_url?: string;
  /** The exact output, derived from size and resolution. */
  width: number;
  height: number;
}

export interface VideoParams {
  model: string;
  prompt?: string;
  duration: number;
  ratio: string;
  resolution: string;
  seed?: number;
  audio: boolean;
  return_last_frame: boolean;
  camerafixed?: boolean;
  tools?: { type: string }[];
  image_urls?: string[];
  image_with_roles?: { url: string; role: string }[];
  video_urls?: string[];
  audio_urls?: string[];
  width: number;
  height: number;
}

/** An avatar review's parameters. */
export interface AvatarReviewParams {
  model: string;
  group_id: string;
  project_name: string;
  asset_type: string;
  assets: { asset_id: string; name: string; url: string }[];
}

export interface ParamsOfKind {
  image: ImageParams;
  video: VideoParams;
  avatar: AvatarReviewParams;
}

export type TaskParams = ParamsOfKind[TaskKind];

/** A kind with its parameters: checking `kind` narrows `params`. */
export type KindParams = { [K in TaskKind]: { kind: K; params: ParamsOfKind[K] } }[TaskKind];

/** Every kind's fields, all optional: for code that reads a field whatever the task's kind. */
export type AnyKindParams = Partial<ImageParams & VideoParams & AvatarReviewParams>;
