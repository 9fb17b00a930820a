import type { VideoParams } from '../../core/task-params.ts';
import { ArkError, arkRequest, arkTaskError } from './ark.http.ts';
import { paramsOf, type ProducedResult, type ProviderStep, type TaskCall } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import type { ArkTaskRecord } from './ark.answers.ts';
import { arkVideoBody } from './ark.video-body.ts';
import type { ArkRequestPacer } from './ark.video-batch.ts';

// ModelArk content generation tasks (video): POST creates, GET polls, DELETE cancels. Its result
// links live 24 h on the vendor's storage, so the engine downloads them into our store before the
// task completes. Errors are ModelArk's {error: {code, message}}.

const TASKS = '/api/v3/contents/generations/tasks';

export interface ArkVideoOptions {
  /** First poll delay; later polls back off with the task's age up to `maxPollMs`. */
  pollMs: number;
  maxPollMs: number;
  timeoutMs: number;
  /** Our inbound callback URL for a task, when upstream callbacks are on. */
  callbackUrl?(taskId: string): string | undefined;
  /** Our asset ids -> the upstream's asset ids (reviewed through the asset library). */
  upstreamAssets?(ourIds: string[]): Promise<Map<string, string>>;
  /** Batches polls into list calls and keeps each channel under its max_requests_per_second. */
  pacer?: ArkRequestPacer;
}

/** Sensitive-content and risk-detection codes are the caller's content, not our failure. */
export const isContentPolicy = (code: string) => /Sensitive|RiskDetection/i.test(code);

export function failureCode(status: string, code: string): string {
  if (isContentPolicy(code)) return 'content_policy_violation';
  if (status === 'expired') return 'timeout';
  return 'upstream_error';
}

/** One call for a video task on its channel. */
export const arkVideoCall = (call: TaskCall, method: 'GET' | 'POST' | 'DELETE', path: string, timeoutMs: number, body?: unknown): Promise<unknown> =>
  arkRequest(call.channel, method, path, timeoutMs, body);

export class ArkVideo {
  constructor(private readonly options: ArkVideoOptions) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const params = paramsOf(call, 'video');
    const assets = this.options.upstreamAssets ? await this.options.upstreamAssets(referencedAssets(params)) : new Map<string, string>();
    const callbackUrl = this.options.callbackUrl?.(call.task.id);
    const body = arkVideoBody(params, call.upstreamModel, { assets, callbackUrl, watermark: channelOption(call, 'watermark') });
    try {
      await this.options.pacer?.slot(call.channel);
      const created = (await arkVideoCall(call, 'POST', TASKS, this.options.timeoutMs, body)) as ArkTaskRecord | null;
      if (typeof created?.id !== 'string') throw new UpstreamRejected('upstream_error', 'ModelArk answered without a task id');
      return { state: 'pending', upstreamId: created.id, pollAt: Date.now() + this.options.pollMs, progress: 10 };
    } catch (err) {
      throw arkTaskError(err);
    }
  }

  async poll(call: TaskCall): Promise<ProviderStep> {
    let record: ArkTaskRecord | null;
    try {
      record = (this.options.pacer
        ? await this.options.pacer.poll(call)
        : await arkVideoCall(call, 'GET', `${TASKS}/${encodeURIComponent(call.task.upstream_id ?? '')}`, this.options.timeoutMs)) as ArkTaskRecord | null;
    } catch (err) {
      throw arkTaskError(err);
    }
    return this.step(call, record);
  }

  /** One task object (from GET or from the list endpoint) as a provider step. */
  step(call: TaskCall, record: ArkTaskRecord | null): ProviderStep {
    const status = String(record?.status ?? '');
    if (status === 'succeeded' && record) return completed(call, record);
    if (status === 'failed' || status === 'expired' || status === 'cancelled') {
      const code = String(record?.error?.code ?? '');
      const message = status === 'cancelled' ? 'The task was cancelled at ModelArk' : String(record?.error?.message || `ModelArk ended the task as ${status}`);
      return { state: 'failed', code: failureCode(status, code), message: code ? `${message} (${code})` : message };
    }
    const progress = status === 'running' ? runningProgress(call) : 10;
    return { state: 'pending', pollAt: Date.now() + this.nextPollMs(call), progress };
  }

  /** Backs off with the task's age: young tasks are asked often, old ones rarely. */
  nextPollMs(call: TaskCall): number {
    const age = Date.now() - (call.task.started_at ?? call.task.created_at);
    return Math.min(this.options.maxPollMs, Math.max(this.options.pollMs, Math.floor(age / 10)));
  }

  /**
   * Asks ModelArk to drop the task (a deadline passed here). Only a queued task can be cancelled
   * there; a running one is reported as such (the caller asks again), a finished one by its status.
   */
  async cancel(call: TaskCall): Promise<{ cancelled: boolean; status?: string }> {
    const path = `${TASKS}/${encodeURIComponent(call.task.upstream_id ?? '')}`;
    try {
      await this.options.pacer?.slot(call.channel);
      const status = String(((await arkVideoCall(call, 'GET', path, this.options.timeoutMs)) as ArkTaskRecord | null)?.status ?? '');
      if (status !== 'queued') return { cancelled: false, status };
      await this.options.pacer?.slot(call.channel);
      await arkVideoCall(call, 'DELETE', path, this.options.timeoutMs);
      return { cancelled: true, status: 'cancelled' };
    } catch (err) {
      if (err instanceof ArkError && err.status === 404) return { cancelled: true, status: 'gone' };
      // It may have started between the two calls: the next attempt sees it running.
      if (err instanceof ArkError && err.status === 400) return { cancelled: false, status: 'running' };
      throw err;
    }
  }
}

function completed(call: TaskCall, record: ArkTaskRecord): ProviderStep {
  const videoUrl = record.content?.video_url;
  if (typeof videoUrl !== 'string') return { state: 'failed', code: 'upstream_error', message: 'ModelArk reported success without a video_url' };
  const video: NonNullable<ProducedResult['videos']>[number] = {
    url: [{ url: videoUrl }],
    duration: typeof record.duration === 'number' && Number.isInteger(record.duration) ? record.duration : paramsOf(call, 'video').duration,
    resolution: typeof record.resolution === 'string' ? record.resolution : paramsOf(call, 'video').resolution,
  };
  const lastFrame = record.content?.last_frame_url;
  if (typeof lastFrame === 'string') video.last_frame_url = { url: lastFrame };
  const tokens = Number(record.usage?.completion_tokens);
  return {
    state: 'completed',
    result: { videos: [video] },
    // Settled at these tokens when the model is priced per token, else at the held price.
    ...(Number.isFinite(tokens) && tokens >= 0 ? { usage: { inputTokens: 0, outputTokens: tokens } } : {}),
  };
}

/** ModelArk reports no progress: estimate it from the time running, 20 -> 95. */
function runningProgress(call: TaskCall): number {
  const since = Date.now() - (call.task.started_at ?? call.task.created_at);
  return Math.min(95, 20 + Math.floor(since / 2000));
}

function channelOption(call: TaskCall, name: string): unknown {
  return call.channel.options[name];
}

export function referencedAssets(params: VideoParams): string[] {
  const urls: string[] = [...(params.image_urls ?? []), ...(params.video_urls ?? []), ...(params.audio_urls ?? []), ...(params.image_with_roles ?? []).map((r) => r.url)];
  return [...new Set(urls.filter((u) => u.startsWith('asset://')).map((u) => u.slice('asset://'.length)))];
}
