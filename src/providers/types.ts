import type { Channel, Task } from '../db/types.ts';

// Every upstream sits behind this interface. A task provider is driven by the job engine: `submit`
// once (dispatch job), then `poll` until it reports an end. Network errors are thrown and retried.

export interface TaskResult {
  images?: { url: string[]; expires_at: number }[];
  videos?: { url: string[]; expires_at: number; duration: number; resolution: string; last_frame_url?: string }[];
  audios?: { url: string[]; expires_at: number }[];
  [other: string]: unknown;
}

export type ProviderStep =
  | { state: 'pending'; pollAt: number; upstreamId?: string; etaAt?: number; progress?: number }
  | {
      state: 'completed';
      result: TaskResult;
      /** Counted usage for per-token models; the task settles at the price of these tokens. */
      usage?: { inputTokens: number; outputTokens: number };
      /** What the work done is worth, when the upstream can say (never above the hold). */
      billedUnits?: number;
    }
  | { state: 'failed'; code: string; message: string; result?: TaskResult; billedUnits?: number };

export interface TaskCall {
  task: Task;
  /** The normalized request parameters. */
  params: Record<string, any>;
  channel: Channel;
  /** The model name to send upstream (after the channel's mapping). */
  upstreamModel: string;
}

export interface TaskProvider {
  submit(call: TaskCall): Promise<ProviderStep>;
  poll(call: TaskCall): Promise<ProviderStep>;
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
