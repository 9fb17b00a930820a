import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A strict local ModelArk "content generation tasks" API (video), as BytePlus documents it:
//   POST   /api/v3/contents/generations/tasks        -> {"id": "cgt-..."}
//   GET    /api/v3/contents/generations/tasks/{id}   -> the task object
//   GET    /api/v3/contents/generations/tasks?page_num&page_size&filter.task_ids=..  -> {total, items}
//   DELETE /api/v3/contents/generations/tasks/{id}   -> cancels a queued task; running ones cannot be
//          cancelled (400); finished ones are deleted.
// Sources: docs.byteplus.com/en/docs/ModelArk/1520757 (create: model, content[] of text / image_url /
// video_url / audio_url with roles first_frame, last_frame, reference_image, reference_video,
// reference_audio; ratio, resolution, duration, seed, camera_fixed, watermark, generate_audio,
// return_last_frame, tools, callback_url, execution_expires_after; "at most 120 queued tasks per
// account"), the query answer (id, model, status queued|running|cancelled|succeeded|failed|expired,
// error {code, message} or null, content {video_url, last_frame_url}, usage {completion_tokens,
// total_tokens}, seed, resolution, ratio, duration, framespersecond, created_at, updated_at), and
// volcengine-python-sdk volcenginesdkarkruntime/resources/content_generation/tasks.py (paths, the
// list query `filter.task_ids` repeated, page_num, page_size). Errors are ModelArk's OpenAI-style
// {"error": {"code", "message", "param", "type"}}; sensitive content is reported as
// e.g. InputTextSensitiveContentDetected / OutputVideoSensitiveContentDetected.
//
// A prompt steers the fake: [ark:fail=<Code>] ends failed with that code, [ark:expire] ends expired,
// [ark:reject=<Code>] refuses the create with 400 and that code. Every task is queued for `queuedMs`,
// running for `runningMs`, then ends.

const TOP_LEVEL = new Set(['model', 'content', 'ratio', 'resolution', 'duration', 'frames', 'seed', 'camera_fixed', 'watermark', 'generate_audio', 'return_last_frame', 'tools', 'callback_url', 'execution_expires_after', 'service_tier', 'draft']);
const ROLES: Record<string, string[]> = { image_url: ['first_frame', 'last_frame', 'reference_image'], video_url: ['reference_video'], audio_url: ['reference_audio'] };
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];

export interface FakeArkTask {
  id: string;
  body: Record<string, any>;
  createdAt: number;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'expired' | 'cancelled';
  /** Set when a test or a DELETE decides the ending. */
  forced?: FakeArkTask['status'];
  deleted?: boolean;
  callbacks: number;
  /** This task's own times (options.timing), else the fake's queuedMs / runningMs at each read. */
  timing?: { queuedMs: number; runningMs: number };
}

export interface FakeArkVideo {
  url: string;
  apiKey: string;
  tasks: Map<string, FakeArkTask>;
  /** Every request as method + path (query stripped), in order. */
  requests: { method: string; path: string; at: number; query: string }[];
  queuedMs: number;
  runningMs: number;
  /** Answer creates with this status (e.g. 500, 429) while set. */
  failCreatesWith?: number;
  /** False: the fake makes no callbacks (a test makes them itself). */
  sendCallbacks: boolean;
  /** Callback POSTs the fake made: [taskId, status, answer status]. */
  callbacksSent: [string, string, number][];
  /** Makes a running (or queued) task end as given, at its next read. */
  finish(id: string, status: FakeArkTask['status']): void;
  downloads: number;
  /** Video files are sent this slowly (ms for the whole body), for crash tests. */
  slowFileMs: number;
  /** When the task ends there by its times (ms since the epoch), for benches timing our ending. */
  endsAt(id: string): number | undefined;
  /** Gives an open task new times (from its creation), e.g. to end thousands over the next minute. */
  retime(id: string, timing: { queuedMs: number; runningMs: number }): void;
  close(): Promise<void>;
}

const VIDEO_BYTES = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(4), Buffer.from('mp42isom'), Buffer.alloc(2000, 7)]);
const PNG_BYTES = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 1)]);

function errorBody(code: string, message: string, type = 'BadRequest', param = '') {
  return { error: { code, message, param, type } };
}

/** What a field must be: returns an error message or undefined. */
function checkBody(body: any): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'The request body must be a JSON object';
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return `The parameter \`${key}\` specified in the request is not valid`;
  if (typeof body.model !== 'string' || !body.model) return 'The parameter `model` specified in the request is not valid';
  if (!Array.isArray(body.content) || body.content.length === 0) return 'The parameter `content` specified in the request is not valid';
  for (const [i, item] of body.content.entries()) {
    if (item?.type === 'text') {
      if (typeof item.text !== 'string' || Object.keys(item).some((k) => k !== 'type' && k !== 'text')) return `content[${i}] text is not valid`;
      continue;
    }
    const roles = ROLES[item?.type];
    if (!roles) return `content[${i}].type is not valid`;
    if (typeof item[item.type]?.url !== 'string') return `content[${i}].${item.type}.url is not valid`;
    if (item.role !== undefined && !roles.includes(item.role)) return `content[${i}].role is not valid`;
    if (Object.keys(item).some((k) => !['type', item.type, 'role'].includes(k))) return `content[${i}] has an unknown field`;
  }
  const types: Record<string, string> = { ratio: 'string', resolution: 'string', duration: 'number', seed: 'number', camera_fixed: 'boolean', watermark: 'boolean', generate_audio: 'boolean', return_last_frame: 'boolean', callback_url: 'string' };
  for (const [key, type] of Object.entries(types)) if (body[key] !== undefined && typeof body[key] !== type) return `The parameter \`${key}\` must be a ${type}`;
  if (body.ratio !== undefined && !RATIOS.includes(body.ratio)) return 'The parameter `ratio` specified in the request is not valid';
  if (body.resolution !== undefined && !['480p', '720p', '1080p', '4k'].includes(body.resolution)) return 'The parameter `resolution` specified in the request is not valid';
  if (body.duration !== undefined && (!Number.isInteger(body.duration) || body.duration < 2 || body.duration > 15)) return 'The parameter `duration` specified in the request is not valid';
  if (body.tools !== undefined && (!Array.isArray(body.tools) || body.tools.some((t: any) => t?.type !== 'web_search'))) return 'The parameter `tools` specified in the request is not valid';
  return undefined;
}

export interface FakeArkVideoOptions {
  apiKey?: string;
  queuedMs?: number;
  runningMs?: number;
  /** Times of the n-th created task (1-based), e.g. to finish thousands over a minute. */
  timing?: (n: number) => { queuedMs: number; runningMs: number };
}

export async function startFakeArkVideo(options: FakeArkVideoOptions = {}): Promise<FakeArkVideo> {
  let seq = 0;
  const fake = {
    apiKey: options.apiKey ?? 'ark-test-key',
    tasks: new Map(),
    requests: [],
    queuedMs: options.queuedMs ?? 30,
    runningMs: options.runningMs ?? 60,
    callbacksSent: [],
    sendCallbacks: true,
    downloads: 0,
    slowFileMs: 0,
  } as unknown as FakeArkVideo;

  const prompt = (t: FakeArkTask) => String(t.body.content.find((c: any) => c.type === 'text')?.text ?? '');
  const timesOf = (t: FakeArkTask) => t.timing ?? { queuedMs: fake.queuedMs, runningMs: fake.runningMs };
  const statusOf = (t: FakeArkTask): FakeArkTask['status'] => {
    if (t.forced) return t.forced;
    const age = Date.now() - t.createdAt;
    const { queuedMs, runningMs } = timesOf(t);
    if (age < queuedMs) return 'queued';
    if (age < queuedMs + runningMs) return 'running';
    const p = prompt(t);
    if (/\[ark:fail=/.test(p)) return 'failed';
    if (p.includes('[ark:expire]')) return 'expired';
    return 'succeeded';
  };
  const view = (t: FakeArkTask) => {
    const status = statusOf(t);
    const out: Record<string, unknown> = {
      id: t.id,
      model: t.body.model,
      status,
      error: null,
      created_at: Math.floor(t.createdAt / 1000),
      updated_at: Math.floor(Date.now() / 1000),
      seed: t.body.seed ?? 12345,
      resolution: t.body.resolution ?? '720p',
      ratio: t.body.ratio ?? '16:9',
      duration: t.body.duration ?? 5,
      framespersecond: 24,
    };
    if (status === 'succeeded') {
      out.content = { video_url: `${fake.url}/files/${t.id}.mp4`, ...(t.body.return_last_frame ? { last_frame_url: `${fake.url}/files/${t.id}.png` } : {}) };
      out.usage = { completion_tokens: 108900, total_tokens: 108900 };
    }
    if (status === 'failed') {
      const code = /\[ark:fail=([A-Za-z.]+)\]/.exec(prompt(t))?.[1] ?? 'InternalServiceError';
      out.error = { code, message: `The task failed: ${code}` };
    }
    if (status === 'expired') out.error = { code: 'TaskExpired', message: 'The task expired before it ran' };
    return out;
  };
  fake.finish = (id, status) => {
    const t = fake.tasks.get(id);
    if (t) t.forced = status;
    checks.get(id)?.();
  };
  fake.retime = (id, timing) => {
    const t = fake.tasks.get(id);
    if (t) t.timing = timing;
    checks.get(id)?.();
  };
  fake.endsAt = (id) => {
    const t = fake.tasks.get(id);
    if (!t) return undefined;
    const { queuedMs, runningMs } = timesOf(t);
    return t.createdAt + queuedMs + runningMs;
  };

  // ModelArk calls callback_url on each status change with the task object.
  const notify = async (t: FakeArkTask) => {
    const url = t.body.callback_url;
    if (!url || !fake.sendCallbacks) return;
    // The status this callback carries, not the one the task has by the time the answer comes back.
    const status = statusOf(t);
    const body = JSON.stringify(view(t));
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      fake.callbacksSent.push([t.id, status, res.status]);
    } catch {
      fake.callbacksSent.push([t.id, status, 0]);
    }
  };
  // One timer per task at its next change (not a ticking interval: a bench keeps 10,000 open).
  const checks = new Map<string, () => void>();
  const watch = (t: FakeArkTask) => {
    let last = '';
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      clearTimeout(timer);
      if (t.deleted || !fake.tasks.has(t.id)) return void checks.delete(t.id);
      const now = statusOf(t);
      if (now !== last) {
        last = now;
        void notify(t);
      }
      if (['succeeded', 'failed', 'expired', 'cancelled'].includes(now)) return void checks.delete(t.id);
      const { queuedMs, runningMs } = timesOf(t);
      const age = Date.now() - t.createdAt;
      timer = setTimeout(check, Math.max(1, (age < queuedMs ? queuedMs : queuedMs + runningMs) - age + 1));
      timer.unref();
    };
    checks.set(t.id, check);
    check();
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    fake.requests.push({ method: req.method ?? '', path: url.pathname, at: Date.now(), query: url.search });
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname.startsWith('/files/')) {
      fake.downloads++;
      const bytes = url.pathname.endsWith('.png') ? PNG_BYTES : VIDEO_BYTES;
      res.writeHead(200, { 'content-type': url.pathname.endsWith('.png') ? 'image/png' : 'video/mp4', 'content-length': bytes.length });
      if (!fake.slowFileMs) return res.end(bytes);
      res.write(bytes.subarray(0, 10));
      const timer = setTimeout(() => res.end(bytes.subarray(10)), fake.slowFileMs);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    if (!url.pathname.startsWith('/api/v3/contents/generations/tasks')) return json(404, errorBody('NotFound', 'The requested resource was not found', 'NotFound'));
    if (req.headers.authorization !== `Bearer ${fake.apiKey}`) {
      return json(401, errorBody('AuthenticationError', 'The API key in the request is missing or invalid', 'Unauthorized'));
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = decodeURIComponent(url.pathname.slice('/api/v3/contents/generations/tasks/'.length));
      if (req.method === 'POST' && url.pathname === '/api/v3/contents/generations/tasks') {
        if (!String(req.headers['content-type']).startsWith('application/json')) return json(400, errorBody('InvalidParameter', 'Content-Type must be application/json'));
        if (fake.failCreatesWith) return json(fake.failCreatesWith, errorBody('ServerOverloaded', 'The service is overloaded', 'TooManyRequests'));
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return json(400, errorBody('InvalidParameter', 'The request body is not valid JSON'));
        }
        const problem = checkBody(body);
        if (problem) return json(400, errorBody('InvalidParameter', problem));
        const text = String(body.content.find((c: any) => c.type === 'text')?.text ?? '');
        const reject = /\[ark:reject=([A-Za-z.]+)\]/.exec(text)?.[1];
        if (reject) return json(400, errorBody(reject, `The request failed: ${reject}`));
        const n = ++seq;
        const task: FakeArkTask = { id: `cgt-${Date.now()}-${n}`, body, createdAt: Date.now(), status: 'queued', callbacks: 0, ...(options.timing ? { timing: options.timing(n) } : {}) };
        fake.tasks.set(task.id, task);
        watch(task);
        return json(200, { id: task.id });
      }
      if (req.method === 'GET' && url.pathname === '/api/v3/contents/generations/tasks') {
        const ids = url.searchParams.getAll('filter.task_ids');
        const size = Number(url.searchParams.get('page_size') ?? 10);
        if (!Number.isInteger(size) || size < 1 || size > 500) return json(400, errorBody('InvalidParameter', 'page_size must be 1 to 500'));
        const named = ids.length === 0 ? [...fake.tasks.values()] : ids.map((i) => fake.tasks.get(i)).filter((t) => t !== undefined);
        const items = named.filter((t) => !t.deleted).map(view);
        return json(200, { total: items.length, items: items.slice(0, size) });
      }
      const task = fake.tasks.get(id);
      if (!task || task.deleted) return json(404, errorBody('ResourceNotFound', `The task ${id} was not found`, 'NotFound'));
      if (req.method === 'GET') return json(200, view(task));
      if (req.method === 'DELETE') {
        const status = statusOf(task);
        if (status === 'queued') {
          task.forced = 'cancelled';
          checks.get(task.id)?.();
          return json(200, {});
        }
        if (status === 'running') return json(400, errorBody('InvalidAction.TaskRunning', 'A running task cannot be cancelled'));
        task.deleted = true;
        return json(200, {});
      }
      json(405, errorBody('MethodNotAllowed', 'Method not allowed'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return fake;
}
