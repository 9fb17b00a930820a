import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';

// Servers run pinned to core 0 and this load generator to core 1 (when taskset exists), so the two
// never compete for a core. Every child is killed on exit; every run is bounded in time.

export const ROOT = path.resolve(import.meta.dirname, '..');
export const ADMIN = 'bench-admin-token-0123456789';
const hasTaskset = spawnSync('which', ['taskset']).status === 0;
const children: ChildProcess[] = [];

process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(1));

/** The messages bodies the CPU benches load with: a one-line prompt answered whole, and a streamed one. */
export const WHOLE_BODY = JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
export const STREAM_BODY = JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 8000, stream: true, messages: [{ role: 'user', content: 'Stream to me' }] });
/** A streamed Responses call (POST /v1/responses), answered by bench/stream-upstream.ts in that format. */
export const RESPONSES_STREAM_BODY = JSON.stringify({ model: 'chatgen-4-haiku', max_output_tokens: 8000, stream: true, input: 'Stream to me' });

/** The local messages upstream for those bodies: one that answers at once, or one that streams 200 events. */
export const messagesUpstream = (stream: boolean) =>
  stream ? startServer('bench/stream-upstream.ts', { EVENTS: '200' }, '/v1/messages') : startServer('bench/fake-messages-upstream.ts', {}, '/v1/messages');

export function pinSelf(): void {
  if (hasTaskset) spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
}

let nextPort = 19000 + Math.floor(Math.random() * 1000);

const built = new Set<string>();
/** The node flags of that checkout's `npm start` (its young-generation size among them). */
function startFlags(root: string): string[] {
  const start = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/**
 * The gateway runs as `npm start` runs it: the esbuild bundle under dist/server (built once per
 * checkout per run), with the start script's node flags; tsx's transform of the sources names every
 * closure it makes at run time (`__name`), a cost the shipped bundle does not have. RUN_SOURCE=1 in a
 * server's env runs the sources through tsx instead; the bench's own servers always run through tsx.
 */
function runnable(entry: string, fromSource: boolean): string[] {
  const root = path.resolve(ROOT, path.dirname(entry), '..');
  if (fromSource || !entry.endsWith(path.join('src', 'main.ts'))) return ['--import', 'tsx', entry];
  if (!built.has(root)) {
    const build = spawnSync('npm', ['run', 'build:server', '--silent'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`npm run build:server failed in ${root}`);
    built.add(root);
  }
  return [...startFlags(root), path.join(root, 'dist/server/main.js')];
}

export async function startServer(entry: string, env: Record<string, string>, health = '/healthz'): Promise<{ url: string; child: ChildProcess }> {
  const port = nextPort++;
  // NODE_ARGS: extra flags for node itself (e.g. --cpu-prof, which NODE_OPTIONS refuses).
  const nodeArgs = env.NODE_ARGS ? env.NODE_ARGS.split(' ') : [];
  const args = [...nodeArgs, ...runnable(entry, env.RUN_SOURCE === '1')];
  const pin = hasTaskset && !env.NO_PIN;
  const child = spawn(pin ? 'taskset' : process.execPath, pin ? ['-c', '0', process.execPath, ...args] : args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', GATEWAY_DEMO: '0', HOST: '127.0.0.1', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env },
    // BENCH_LOG=<file>: the servers' log lines (LOG_LEVEL warn) go there instead of nowhere.
    stdio: ['ignore', process.env.BENCH_LOG ? fs.openSync(process.env.BENCH_LOG, 'a') : 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      const res = await request(`${url}${health}`);
      await res.body.dump();
      if (res.statusCode < 500) return { url, child };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${entry} did not start`);
}

export function tempSqlite(): string {
  return `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-')), 'gateway.db')}`;
}

export async function json(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return (await res.body.json()) as any;
}

/**
 * Sends `chatgen-4-haiku` to a messages-format upstream: the simulator stops serving it and a
 * messages channel to `upstream` takes it (the text benches' passthrough).
 */
export async function routeHaikuTo(url: string, upstream: string, type: 'messages' | 'openai' = 'messages'): Promise<void> {
  const admin = { authorization: `Bearer ${ADMIN}` };
  const simulator = (await json('GET', `${url}/admin/channels`, admin)).data.find((c: { type: string }) => c.type === 'simulator');
  await fetch(`${url}/admin/channels/${simulator.id}`, { method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ models: simulator.models.filter((m: string) => m !== 'chatgen-4-haiku') }) });
  await json('POST', `${url}/admin/channels`, admin, { name: 'bench-upstream', type, base_url: upstream, secret: 'upstream-key', models: ['chatgen-4-haiku'] });
}

/** An account with plenty of money and an unlimited key with no practical rate limit. */
export async function benchKey(url: string): Promise<string> {
  const admin = { authorization: `Bearer ${ADMIN}` };
  const user = await json('POST', `${url}/admin/users`, admin, { name: 'bench', balance: 1_000_000 });
  const key = await json('POST', `${url}/admin/keys`, admin, { user_id: user.id, unlimited: true, rate_limit_rpm: 10_000_000 });
  return key.key;
}

export interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(name: string, options: autocannon.Options): Promise<Measured> {
  // A short warm-up so the JIT and the caches are hot before the measured run.
  await autocannon({ ...options, duration: 2 });
  const result = await autocannon({ connections: 50, duration: Number(process.env.BENCH_SECONDS ?? 10), ...options });
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

export function table(rows: Measured[], baseline?: Measured): string {
  const lines = ['| target | requests/s | p50 ms | p99 ms | errors | non-2xx |' + (baseline ? ` vs ${baseline.name} |` : ''), '|---|---|---|---|---|---|' + (baseline ? '---|' : '')];
  for (const r of rows) {
    const ratio = baseline ? ` ${((r.rps / baseline.rps) * 100).toFixed(0)}% |` : '';
    lines.push(`| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |${ratio}`);
  }
  return lines.join('\n');
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `${os.cpus().length} x ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}${hasTaskset ? ', servers on core 0, load on core 1' : ''}`;
}
