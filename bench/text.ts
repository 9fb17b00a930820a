import autocannon from 'autocannon';
import { Client } from 'undici';
import { ADMIN, benchKey, machine, pinSelf, routeHaikuTo, startServer, tempSqlite } from './lib.ts';
import { PORTKEY_VERSION, portkeyMessagesHeaders, startPortkey } from './portkey.ts';

// Messages passthrough to a local upstream that answers at once, in one run against (a) calling the
// upstream directly, (b) a bare Node http proxy, (c) the Portkey gateway from npm (installed here
// into bench/.portkey, which git ignores), (d) this gateway's /v1/messages and (e) its
// /v1/chat/completions (the OpenAI format in and out, translated to the same messages upstream).
// Servers on core 0, load on core 1.
//
// This VM's speed drifts by a third within minutes, more than the differences measured, so the
// targets are measured in interleaved rounds: every round loads each target in turn for a few
// seconds, each ratio is taken within its round, and the median round is reported (with the spread).
// BENCH_ROUNDS (5), BENCH_SECONDS per target and round (5), PROBE_REQUESTS per target and round (400),
// BENCH_FRAMEWORK=1 (the bare proxy in a Fastify route as well).
pinSelf();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PROBE_REQUESTS = Number(process.env.PROBE_REQUESTS ?? 400);
const body = JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
const chatBody = JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The messages body unless given. */
  body?: string;
}

async function loadOnce(target: Target, seconds: number) {
  const result = await autocannon({ url: target.url, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: target.body ?? body, connections: 50, duration: seconds });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, failed: result.errors + result.timeouts + result.non2xx };
}

/** Sequential requests on one keep-alive connection: their p50 in ms. */
async function probeOnce(target: Target, requests: number): Promise<number> {
  const url = new URL(target.url);
  const client = new Client(url.origin, { pipelining: 1 });
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const start = process.hrtime.bigint();
    const res = await client.request({ path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: target.body ?? body });
    await res.body.dump();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await client.close();
  return median(times);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const spread = (values: number[], digits = 0) => `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;

const upstream = await startServer('bench/fake-messages-upstream.ts', {}, '/v1/messages');
const bare = await startServer('bench/bare-proxy.ts', { UPSTREAM: upstream.url }, '/v1/messages');
const { url: portkey } = await startPortkey();
// BENCH_FRAMEWORK=1: also the bare proxy inside a Fastify route (bench/fastify-proxy.ts), the framework's own share.
const framework = process.env.BENCH_FRAMEWORK === '1' ? await startServer('bench/fastify-proxy.ts', { UPSTREAM: upstream.url }, '/v1/messages') : undefined;
const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0' });

// The gateway: a messages channel to the upstream, an account and a key; auth, rate limit and billing on.
await routeHaikuTo(gateway.url, upstream.url);
const key = await benchKey(gateway.url);

const targets: Target[] = [
  { name: 'upstream, called directly', url: `${upstream.url}/v1/messages`, headers: {} },
  { name: 'bare Node http proxy', url: `${bare.url}/v1/messages`, headers: {} },
  { name: `Portkey gateway ${PORTKEY_VERSION}`, url: `${portkey}/v1/messages`, headers: portkeyMessagesHeaders(upstream.url) },
  { name: 'this gateway, /v1/messages (auth, rate limit, billing)', url: `${gateway.url}/v1/messages`, headers: { 'x-api-key': key } },
  { name: 'this gateway, /v1/chat/completions (same, OpenAI format)', url: `${gateway.url}/v1/chat/completions`, headers: { authorization: `Bearer ${key}` }, body: chatBody },
  ...(framework ? [{ name: 'the bare proxy in a Fastify route', url: `${framework.url}/v1/messages`, headers: {} }] : []),
];
const [, bareTarget, portkeyTarget, ours, chat, frameworkTarget] = targets as [Target, Target, Target, Target, Target, Target | undefined];

// Warm-up (JIT, pools, caches) before anything is measured. Three loads, not one: when a load's
// 50 connections close, V8 throws away optimized code that assumed open sockets and compiles it
// again under the next load. Measured on this gateway (--trace-opt, 4 s loads): 3.3 s of background
// compilation during the first load, 0.5 s during the second, 0.1 s during the third, ~0 after.
// That compilation runs on the servers' core, so with one warm-up load it was still in round 1.
for (const target of targets) {
  for (let i = 0; i < 3; i++) await loadOnce(target, 2);
  await probeOnce(target, 200);
}

const loads = new Map(targets.map((t) => [t, [] as Awaited<ReturnType<typeof loadOnce>>[]]));
const probes = new Map(targets.map((t) => [t, [] as number[]]));
for (let round = 0; round < ROUNDS; round++) {
  for (const target of targets) loads.get(target)!.push(await loadOnce(target, SECONDS));
  for (const target of targets) probes.get(target)!.push(await probeOnce(target, PROBE_REQUESTS));
  const r = (t: Target) => loads.get(t)![round]!.rps;
  console.error(`round ${round + 1}: ${targets.map((t) => `${Math.round(r(t))}`).join(' / ')} req/s; ours/bare ${((100 * r(ours)) / r(bareTarget)).toFixed(0)}%`);
}

const perRound = (t: Target, of: (round: number) => number) => Array.from({ length: ROUNDS }, (_, i) => of(i));
const rps = (t: Target, i: number) => loads.get(t)![i]!.rps;
const vsBare = perRound(ours, (i) => (100 * rps(ours, i)) / rps(bareTarget, i));
const chatVsBare = perRound(chat, (i) => (100 * rps(chat, i)) / rps(bareTarget, i));
const vsPortkey = perRound(ours, (i) => rps(ours, i) / rps(portkeyTarget, i));
const added = (t: Target) => perRound(t, (i) => probes.get(t)![i]! - probes.get(targets[0]!)![i]!);

const lines = [
  `${machine()}; ${ROUNDS} interleaved rounds of ${SECONDS} s per target at 50 connections, then ${PROBE_REQUESTS} sequential requests per target on one keep-alive connection`,
  '',
  '| target | requests/s (median round) | spread over rounds | p50 ms | p99 ms | failed | sequential p50 ms | added p50 vs direct (median, spread) |',
  '|---|---|---|---|---|---|---|---|',
  ...targets.map((t, n) => {
    const l = loads.get(t)!;
    const a = added(t);
    return `| ${t.name} | ${Math.round(median(l.map((x) => x.rps)))} | ${spread(l.map((x) => x.rps))} | ${median(l.map((x) => x.p50))} | ${median(l.map((x) => x.p99))} | ${l.reduce((s, x) => s + x.failed, 0)} | ${median(probes.get(t)!).toFixed(3)} | ${n === 0 ? '-' : `+${median(a).toFixed(3)} (${spread(a, 3)})`} |`;
  }),
  '',
  `This gateway vs the bare proxy, per round: ${vsBare.map((v) => `${v.toFixed(0)}%`).join(', ')}; median **${median(vsBare).toFixed(1)}%** (target >= 75%).`,
  `/v1/chat/completions vs the bare proxy, per round: ${chatVsBare.map((v) => `${v.toFixed(0)}%`).join(', ')}; median **${median(chatVsBare).toFixed(1)}%** (target >= 60%); added p50 median +${median(added(chat)).toFixed(3)} ms.`,
  ...(frameworkTarget ? [`The bare proxy in a Fastify route vs the bare proxy, per round: ${perRound(frameworkTarget, (i) => (100 * rps(frameworkTarget, i)) / rps(bareTarget, i)).map((v) => `${v.toFixed(0)}%`).join(', ')}; median **${median(perRound(frameworkTarget, (i) => (100 * rps(frameworkTarget, i)) / rps(bareTarget, i))).toFixed(1)}%**.`] : []),
  `This gateway vs Portkey, per round: ${vsPortkey.map((v) => `${v.toFixed(1)}x`).join(', ')}; median **${median(vsPortkey).toFixed(1)}x** (target >= 5x).`,
  `Added p50 of this gateway, per round: ${added(ours).map((v) => `+${v.toFixed(3)}`).join(', ')} ms; median **+${median(added(ours)).toFixed(3)} ms** (target < 0.5 ms); the bare proxy's: +${median(added(bareTarget)).toFixed(3)} ms.`,
];
console.log(`\n${lines.join('\n')}\n`);
process.exit(0);
