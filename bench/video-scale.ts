import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { createDb } from '../src/db/index.ts';
import { startFakeArkVideo, type FakeArkVideo } from '../test/support/fake-ark-video.ts';
import { startCpuCount } from './cpu-share.ts';
import { ADMIN, benchKey, json, machine, pinSelf, startServer, tempSqlite } from './lib.ts';

// Issue 23, must-show 3: thousands of open ModelArk video tasks on one gateway process (SQLite,
// default polling settings) against the local fake, which finishes them spread over a minute. What
// it measures: the requests per second the fake receives, the gateway's CPU, and how long after a
// task's success at the fake our record says `completed` — once with polling alone, once with
// upstream callbacks. The fake runs here, in the load generator's process (core 1).
//
//   BENCH_TASKS (10000)  BENCH_SPREAD_S (60)  BENCH_MODES (polling,callbacks)  BENCH_RPS (channel
//   max_requests_per_second, unset = none); UPSTREAM_POLL_MS etc. pass through to the gateway.

const TASKS = Number(process.env.BENCH_TASKS ?? 10_000);
const SPREAD_MS = Number(process.env.BENCH_SPREAD_S ?? 60) * 1000;
const QUEUED_MS = 1000;
const modes = (process.env.BENCH_MODES ?? 'polling,callbacks').split(',') as ('polling' | 'callbacks')[];
pinSelf();

/** Once every task is open there: their successes land uniformly at random over the next SPREAD_MS. */
function spreadEnds(fake: FakeArkVideo): void {
  const from = Date.now() + 1000;
  for (const task of fake.tasks.values()) {
    const endAt = from + Math.random() * SPREAD_MS;
    fake.retime(task.id, { queuedMs: QUEUED_MS, runningMs: endAt - task.createdAt - QUEUED_MS });
  }
}

const kindOf = (r: FakeArkVideo['requests'][number]) =>
  r.path.startsWith('/files/') ? 'file' : r.method === 'POST' ? 'create' : r.method === 'DELETE' ? 'cancel' : r.path.endsWith('/tasks') ? 'list' : 'get';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

async function submitAll(url: string, key: string): Promise<number> {
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < TASKS) {
      const i = next++;
      const res = await request(`${url}/v1/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vidgen-2.0', prompt: `a lighthouse, take ${i}`, duration: 4 }),
      });
      if (res.statusCode !== 200) throw new Error(`submit answered ${res.statusCode}: ${await res.body.text()}`);
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  return Date.now() - started;
}

async function run(mode: 'polling' | 'callbacks') {
  // Every task runs "for an hour" until all are open; then spreadEnds gives them their endings.
  const fake = await startFakeArkVideo({ queuedMs: QUEUED_MS, runningMs: 3_600_000 });
  const database = tempSqlite();
  const env: Record<string, string> = {
    DATABASE_URL: database,
    ADMIN_TOKEN: ADMIN,
    UPSTREAM_CALLBACKS: mode === 'callbacks' ? 'on' : 'off',
    FILES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-video-')),
  };
  const gateway = await startServer('src/main.ts', env);
  const options = process.env.BENCH_RPS ? { max_requests_per_second: Number(process.env.BENCH_RPS) } : {};
  const admin = { authorization: `Bearer ${ADMIN}` };
  const channel = await json('POST', `${gateway.url}/admin/channels`, admin, { name: 'modelark', type: 'ark', base_url: fake.url, secret: fake.apiKey, models: ['vidgen-2.0'], priority: 10, options });
  if (!channel.id) throw new Error(`channel refused: ${JSON.stringify(channel)}`);
  const key = await benchKey(gateway.url);

  const store = createDb(database);
  const cpuAll = startCpuCount({ gateway: () => [gateway.child.pid!] });
  const started = Date.now();
  // Per second: requests at the fake by kind, and the gateway's CPU.
  const seconds: { at: number; counts: Record<string, number>; cpu: number; ended: number }[] = [];
  let seen = 0;
  let cpuTick = startCpuCount({ gateway: () => [gateway.child.pid!] });
  const sampler = setInterval(async () => {
    const fresh = fake.requests.slice(seen);
    seen += fresh.length;
    const counts: Record<string, number> = {};
    for (const r of fresh) counts[kindOf(r)] = (counts[kindOf(r)] ?? 0) + 1;
    const cpu = cpuTick().gateway!;
    cpuTick = startCpuCount({ gateway: () => [gateway.child.pid!] });
    seconds.push({ at: Date.now() - started, counts, cpu, ended: 0 });
  }, 1000);

  const submitMs = await submitAll(gateway.url, key);
  while (fake.tasks.size < TASKS && Date.now() - started < 600_000) await new Promise((r) => setTimeout(r, 100));
  const allOpenS = (Date.now() - started) / 1000;
  spreadEnds(fake);
  const deadline = Date.now() + SPREAD_MS + 180_000;
  let open = TASKS;
  while (open > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const row = await store.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('status', 'in', ['submitted', 'processing']).executeTakeFirstOrThrow();
    open = Number(row.n);
  }
  clearInterval(sampler);
  const wallS = (Date.now() - started) / 1000;
  const cpu = cpuAll().gateway!;

  const tasks = await store.db.selectFrom('tasks').select(['status', 'upstream_id', 'completed_at']).execute();
  await store.close();
  const lags = tasks
    .filter((t) => t.status === 'completed' && t.upstream_id && t.completed_at)
    .map((t) => Number(t.completed_at) - fake.endsAt(t.upstream_id!)!)
    .sort((a, b) => a - b);
  const byKind: Record<string, number> = {};
  for (const r of fake.requests) byKind[kindOf(r)] = (byKind[kindOf(r)] ?? 0) + 1;
  // The polling phase: after the last create, until the last success at the fake.
  const lastCreate = allOpenS * 1000;
  const lastEnd = Math.max(...[...fake.tasks.keys()].map((id) => fake.endsAt(id)!)) - started;
  const phase = seconds.filter((s) => s.at > lastCreate + 1000 && s.at <= lastEnd + 1000);
  const apiPerSecond = (s: (typeof seconds)[number]) => (s.counts.get ?? 0) + (s.counts.list ?? 0) + (s.counts.create ?? 0) + (s.counts.cancel ?? 0);
  const pollRates = phase.map(apiPerSecond);
  const phaseCpu = phase.map((s) => s.cpu).sort((a, b) => a - b);
  await fake.close();
  gateway.child.kill('SIGKILL');
  return {
    mode,
    submitS: submitMs / 1000,
    allOpenS,
    wallS,
    completed: tasks.filter((t) => t.status === 'completed').length,
    failed: tasks.filter((t) => t.status === 'failed').length,
    open,
    byKind,
    callbacks: fake.callbacksSent.length,
    callbacksRefused: fake.callbacksSent.filter(([, , status]) => status !== 200).length,
    pollAvg: pollRates.reduce((a, b) => a + b, 0) / Math.max(1, pollRates.length),
    pollPeak: Math.max(0, ...seconds.map(apiPerSecond)),
    phaseS: phase.length,
    cpuAvg: cpu,
    cpuPhase: phaseCpu.reduce((a, b) => a + b, 0) / Math.max(1, phaseCpu.length),
    cpuPeak: Math.max(0, ...seconds.map((s) => s.cpu)),
    lag: { p50: pct(lags, 50), p90: pct(lags, 90), p99: pct(lags, 99), max: lags.at(-1) ?? NaN },
    series: seconds.filter((_, i) => i % Number(process.env.BENCH_SERIES_EVERY ?? 10) === 0).map((s) => `${Math.round(s.at / 1000)}s: ${apiPerSecond(s)} req/s, cpu ${s.cpu.toFixed(2)}`),
  };
}

const results = [];
for (const mode of modes) {
  const r = await run(mode);
  console.error(JSON.stringify(r));
  results.push(r);
}
const ms = (n: number) => (Number.isFinite(n) ? `${(n / 1000).toFixed(2)} s` : '-');
console.log(`\n${machine()}; ${TASKS} tasks, all open, then successes spread over ${SPREAD_MS / 1000} s\n`);
console.log('| mode | submit / all open at the fake (s) | completed / failed / open | upstream API req/s while polling (avg / peak) | creates, GETs, lists, files | callbacks (refused) | gateway CPU, cores (run avg / polling avg / peak 1 s) | success -> completed p50 / p90 / p99 / max |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const k = r.byKind;
  console.log(
    `| ${r.mode} | ${r.submitS.toFixed(1)} / ${r.allOpenS.toFixed(1)} | ${r.completed} / ${r.failed} / ${r.open} | ${r.pollAvg.toFixed(1)} / ${r.pollPeak} | ${k.create ?? 0}, ${k.get ?? 0}, ${k.list ?? 0}, ${k.file ?? 0} | ${r.callbacks} (${r.callbacksRefused}) | ${r.cpuAvg.toFixed(2)} / ${r.cpuPhase.toFixed(2)} / ${r.cpuPeak.toFixed(2)} | ${ms(r.lag.p50)} / ${ms(r.lag.p90)} / ${ms(r.lag.p99)} / ${ms(r.lag.max)} |`,
  );
}
for (const r of results) console.log(`\n${r.mode}, every 10th second: ${r.series.join('; ')}`);
process.exit(0);
