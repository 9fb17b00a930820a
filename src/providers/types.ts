import type { Readable } from 'node:stream';
import type { Task } from '../db/types.ts';
import type { Channel } from '../core/channel.ts';
import type { RenderSpec } from '../blobs/signed-urls.ts';
import type { ImageParams } from '../modules/catalog/image-rules.ts';
import type { VideoParams } from '../modules/catalog/video-rules.ts';

// Every upstream sits behind this interface. A task provider is driven by the job engine: `submit`
// once (dispatch job), then `poll` until it reports an end. Network errors are thrown and retried.

export interface TaskResult {
  images?: { url: string[]; expires_at: number }[];
  videos?: { url: string[]; expires_at: number; duration: number; resolution: string; last_frame_url?: string }[];
  audios?: { url: string[]; expires_at: number }[];
  [other: string]: unknown;
}

/**
 * One file of a result as a provider hands it over. The task engine stores it and puts our own signed
 * link in its place before the task completes (modules/tasks/task-results.ts).
 */
export type ResultPart =
  | { bytes: Buffer }
  | { stream(): Readable | Promise<Readable> }
  /** Downloaded and stored; `callerGiven` URLs must pass the callback address rules. */
  | { url: string; callerGiven?: boolean }
  /** The simulator's files: rendered into the store on first download. */
  | { render: RenderSpec };

/** A link that is already ours, or a part still to be stored. */
export type Produced = string | ResultPart;

/** A result with parts still to be stored; `expires_at` is filled in by the engine. */
export interface ProducedResult {
  images?: { url: Produced[]; expires_at?: number }[];
  videos?: { url: Produced[]; expires_at?: number; duration: number; resolution: string; last_frame_url?: Produced }[];
  audios?: { url: Produced[]; expires_at?: number }[];
  [other: string]: unknown;
}

export type ProviderStep =
  | { state: 'pending'; pollAt: number; upstreamId?: string; etaAt?: number; progress?: number }
  | {
      state: 'completed';
      result: ProducedResult;
      /** Counted usage for per-token models; the task settles at the price of these tokens. */
      usage?: { inputTokens: number; outputTokens: number };
      /** What the work done is worth, when the upstream can say (never above the hold). */
      billedUnits?: number;
    }
  | { state: 'failed'; code: string; message: string; result?: ProducedResult; billedUnits?: number };

/** An avatar review's parameters, as modules/avatars/avatars.service.ts stores them. */
export interface AvatarReviewParams {
  model: string;
  group_id: string;
  project_name: string;
  asset_type: string;
  assets: { asset_id: string; name: string; url: string }[];
}

/**
 * A task's stored parameters: the normalized request of its kind. A provider that serves one kind
 * narrows them with `as` (ImageParams for an image task): the task's kind, not the object, says which.
 */
export type TaskParams = ImageParams | VideoParams | AvatarReviewParams;

/** Every kind's fields, all optional: for code that reads a field whatever the task's kind. */
export type AnyKindParams = Partial<ImageParams & VideoParams & AvatarReviewParams>;

export interface TaskCall {
  task: Task;
  /** The normalized request parameters. */
  params: TaskParams;
  channel: Channel;
  /** The model name to send upstream (after the channel's mapping). */
  upstreamModel: string;
  /** Aborted when the task's deadline passes: its downloads and upstream calls stop then. */
  signal?: AbortSignal;
}

export interface TaskProvider {
  submit(call: TaskCall): Promise<ProviderStep>;
  poll(call: TaskCall): Promise<ProviderStep>;
  /** Drops the upstream's task after our deadline ended ours; `cancelled` false while it still runs. */
  cancel?(call: TaskCall): Promise<{ cancelled: boolean; status?: string }>;
}

/** An upstream that answers with a client error: the task fails instead of being retried. */
export class UpstreamRejected extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The process already runs as many reference downloads as it allows (in all, or for this account):
 * the task waits, submitted, and its job asks again after `waitMs` without holding a worker slot.
 */
export class ReferencesBusy extends Error {
  constructor(readonly waitMs: number) {
    super('reference downloads are busy');
  }
}

/**
 * The upstream refused the channel itself (401/403: its secret or its account), not the task: the
 * task fails with this error, and the engine marks the channel as needing the operator's attention.
 */
export class ChannelRefused extends UpstreamRejected {}
