import type { Dispatcher } from 'undici';
import { upstreamRequest } from './relay.request.ts';
import { upstreamWhole } from '../upstream-client.ts';
import type { ProviderStep, TaskCall, TaskProvider } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import { addressFree, neutralFailure, rehosted } from './relay.result.ts';

// The upstream is another gateway that speaks our own API: submit, then poll its task record.
// Its result files are downloaded into our store (its links expire on its terms and name its host):
// the links we hand out are ours, with our lifetimes. Nothing else of its records reaches our caller
// but error codes and messages that name no address (relay.result.ts).

const SUBMIT_PATH = { image: '/v1/images/generations', video: '/v1/videos/generations', avatar: '/v1/seedance2/private-avatar' };

// Its answers are our own API's shapes, unchecked on the way in: only the fields read here are named,
// each possibly missing. A receipt's data is one element per task, or (an avatar's) one object.
interface Receipt {
  data?: { task_id?: unknown }[] | { id?: unknown };
}
interface Polled {
  data?: { status?: unknown; progress?: unknown; result?: Record<string, unknown> | null; error?: { code?: unknown; message?: unknown } | null };
}

export interface RelayOptions {
  pollMs: number;
  timeoutMs: number;
  dispatcher?: Dispatcher;
}

/** The answer's JSON as it came (the caller names the shape it expects), or the refusal thrown. */
async function call(call: TaskCall, method: 'GET' | 'POST', path: string, options: RelayOptions, body?: unknown): Promise<unknown> {
  const { channel } = call;
  // A submit is retried after a timeout or a 5xx, when the upstream may have taken it anyway: the key,
  // the same on every retry of this task, lets an upstream that honours it (OpenAI and ModelArk style)
  // answer with the task it already made instead of a second one.
  const idempotency: Record<string, string> = method === 'POST' ? { 'idempotency-key': call.task.id } : {};
  const response = await upstreamWhole({
    url: channel.base_url ?? '',
    path,
    method,
    headers: {
      ...(channel.secret ? { authorization: `Bearer ${channel.secret}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...idempotency,
    },
    body: body ? JSON.stringify(body) : undefined,
    timeoutMs: options.timeoutMs,
    dispatcher: options.dispatcher,
  });
  let json: { error?: { message?: unknown } } | null | undefined;
  try {
    json = JSON.parse(response.text());
  } catch {
    json = undefined;
  }
  // A rate limit is "later", not "no": the task stays open there and is asked again (RelayBusy).
  if (response.statusCode === 429) throw new RelayBusy(Number(response.header('retry-after')));
  // 5xx and unreadable answers are retried by the job engine; other 4xx are final for this task.
  if (response.statusCode >= 500 || json === undefined) {
    throw new Error(`relay upstream answered ${response.statusCode}`);
  }
  if (response.statusCode >= 400) {
    const message = addressFree(json?.error?.message, hostOf(channel.base_url)) ?? `upstream answered ${response.statusCode}`;
    throw new UpstreamRejected('upstream_error', `Upstream refused the task: ${message}`);
  }
  return json;
}

/** The upstream gateway answered 429: a submit goes to the next channel, a poll asks again later. */
export class RelayBusy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`relay upstream answered 429 (retry after ${Number.isFinite(retryAfterSeconds) ? retryAfterSeconds : '?'} s)`);
  }
}

export class RelayProvider implements TaskProvider {
  constructor(private readonly options: RelayOptions) {}

  async submit(task: TaskCall): Promise<ProviderStep> {
    // Upstream asset ids would not be ours, and our assets must be reviewed where they are used.
    if (task.task.kind === 'avatar') throw new UpstreamRejected('upstream_error', 'Avatar review is not relayed: route its model to a reviewing channel');
    // Callbacks are ours to send: the stored parameters never include the caller's webhook.
    const receipt = (await call(task, 'POST', SUBMIT_PATH[task.task.kind], this.options, upstreamRequest(task.params, task.upstreamModel))) as Receipt | null;
    const data = receipt?.data;
    const upstreamId = Array.isArray(data) ? data[0]?.task_id : data?.id;
    if (typeof upstreamId !== 'string') throw new UpstreamRejected('upstream_error', 'Upstream receipt carried no task id');
    return { state: 'pending', upstreamId, pollAt: Date.now() + this.options.pollMs };
  }

  async poll(task: TaskCall): Promise<ProviderStep> {
    const id = encodeURIComponent(task.task.upstream_id ?? '');
    let record: Polled['data'];
    try {
      record = ((await call(task, 'GET', `/v1/tasks/${id}`, this.options)) as Polled | null)?.data;
    } catch (err) {
      if (!(err instanceof RelayBusy)) throw err;
      // Its Retry-After, but never more than ten poll intervals: its window may end sooner for us.
      const wait = Number.isFinite(err.retryAfterSeconds) ? err.retryAfterSeconds * 1000 : this.options.pollMs;
      return { state: 'pending', pollAt: Date.now() + Math.min(Math.max(wait, this.options.pollMs), 10 * this.options.pollMs) };
    }
    if (record?.status === 'completed') return { state: 'completed', result: rehosted(record.result ?? {}, task.kind === 'video' ? task.params : {}) };
    // Its failed record's result (links of its own, signed) is not passed on.
    if (record?.status === 'failed') return { state: 'failed', ...neutralFailure(record.error ?? undefined, hostOf(task.channel.base_url)) };
    const progress = typeof record?.progress === 'number' && Number.isInteger(record.progress) ? Math.min(99, record.progress) : undefined;
    return { state: 'pending', pollAt: Date.now() + this.options.pollMs, progress };
  }
}

function hostOf(baseUrl: string | null): string {
  try {
    return new URL(baseUrl ?? '').hostname;
  } catch {
    return '';
  }
}
