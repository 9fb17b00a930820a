import type { Readable } from 'node:stream';
import type { Channel } from './channel.ts';
import type { TaskPrices } from './prices.ts';
import type { KindParams, ParamsOfKind, TaskKind } from './task-params.ts';
export type { AnyKindParams, AvatarReviewParams, TaskParams } from './task-params.ts';

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

/** The task as a provider reads it (the tasks table's row has more). */
export interface TaskRef {
  id: string;
  user_id: string;
  kind: TaskKind;
  model: string;
  upstream_id: string | null;
  created_at: number;
  started_at: number | null;
  eta_at: number | null;
}

/**
 * The simulator's files, rendered into the store on their first download: the parameters travel in
 * the signed link, so nothing is stored until a caller asks.
 */
export type RenderSpec =
  | { k: 'image'; w: number; h: number; f: 'png' | 'jpeg' | 'webp'; q?: number; s: string; t?: boolean }
  | { k: 'video'; w: number; h: number; d: number; s: string; a?: boolean }
  | { k: 'frame'; w: number; h: number; d: number; s: string };

/** A call of a task provider: the task, its parameters (narrowed by `kind`), the channel and the model. */
export type TaskCall = KindParams & {
  task: TaskRef;
  channel: Channel;
  /** The model name to send upstream (after the channel's mapping). */
  upstreamModel: string;
  /** Aborted when the task's deadline passes: its downloads and upstream calls stop then. */
  signal?: AbortSignal;
  /** The prices the task's account pays (its customer group's), for work worth less than was held; absent = the provider's own. */
  prices?: TaskPrices;
};

/** The call's parameters as its kind has them; a call of another kind reaching a provider is our own bug. */
export function paramsOf<K extends TaskKind>(call: TaskCall, kind: K): ParamsOfKind[K] {
  if (call.kind !== kind) throw new Error(`A ${call.kind} task reached a provider of ${kind} tasks`);
  return call.params as ParamsOfKind[K];
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
