import fs from 'node:fs';
import autocannon from 'autocannon';
import { Client } from 'undici';
import { benchKey, machine, pinSelf, RESPONSES_STREAM_BODY, routeHaikuTo, startServer, STREAM_BODY, tempSqlite, ADMIN } from './lib.ts';
import { PORTKEY_STREAMING_HONO, PORTKEY_VERSION, portkeyLabel, portkeyMessagesHeaders, portkeyOpenAIHeaders, startPortkey } from './portkey.ts';

// Streamed messages passthrough: an upstream that sends EVENTS (200) text deltas of ~20 tokens per
// call (bench/stream-upstream.ts), reached (a) directly, (b) through a bare Node proxy that pipes
// the bytes (bench/stream-proxy.ts), (c) through Portkey from npm, with the @hono/node-server of its
// own lockfile (bench/portkey.ts says why: with the newest it fails every stream) and (d) through this gateway
// (auth, rate limit, hold, the upstream's whole events forwarded with message_start renamed and
// usage read, settlement). Where its time goes: bench/stream-profile.ts. Servers on core 0, load
// on core 1. Two measures, in interleaved rounds as bench/text.ts does (the VM's speed drifts):
// - events per second at 50 connections: whole streams per second times the events in each;
// - time to first event: sequential requests on one keep-alive connection, from sending the request
//   to the first `data:` line; this gateway's added time is its median minus the direct call's;
// - the serving process's CPU per stream under that load (from /proc, every thread): steadier than
//   the rates when other jobs share the machine (the upstream's own CPU is not in a proxy's figure).
// BENCH_ROUNDS (5), BENCH_SECONDS per target and round (5), PROBE_REQUESTS per target and round (200),
// PORTKEY_VERSION (1.15.2), PORTKEY_HONO_NODE_SERVER (1.13.5). BENCH_FORMAT=responses measures the
// same on POST /v1/responses (an `openai` channel, the upstream's Responses events forwarded).
pinSelf();
const RESPONSES = process.env.BENCH_FORMAT === 'responses';
const PATH = RESPONSES ? '/v1/responses' : '/v1/messages';
/** One delta event as each format names it. */
const DELTA = RESPONSES ? /"response\.output_text\.delta"/g : /content_block_delta/g;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PROBE_REQUESTS = Number(process.env.PROBE_REQUESTS ?? 200);
const EVENTS = 200;
const body = RESPONSES ? RESPONSES_STREAM_BODY : STREAM_BODY;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The process serving `url`, whose CPU is counted. */
  pid: number;
}

/** utime + stime of every thread of a process, in clock ticks (1/100 s); see bench/stream-profile.ts. */
const cpuTicks = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

async function loadOnce(target: Target, seconds: number) {
  const ticks = cpuTicks(target.pid);
  const result = await autocannon({ url: target.url, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body, connections: 50, duration: seconds });
  const cpu = ((cpuTicks(target.pid) - ticks) * 10_000) / Math.max(1, result.requests.total);
  return { streams: result.requests.average, events: result.requests.average * EVENTS, p50: result.latency.p50, failed: result.errors + result.timeouts + result.non2xx, bytes: result.throughput.average / Math.max(1, result.requests.average), cpu };
}

/** Sequential streams on one keep-alive connection: the median ms to the first event, and the events counted in the last. */
async function probeOnce(target: Target, requests: number): Promise<{ first: number; events: number }> {
  const url = new URL(target.url);
  const client = new Client(url.origin, { pipelining: 1 });
  const times: number[] = [];
  let events = 0;
  for (let i = 0; i < requests; i++) {
    const start = process.hrtime.bigint();
    const res = await client.request({ path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body });
    let seen = '';
    let first = 0;
    for await (const chunk of res.body) {
      if (!first) {
        seen += chunk.toString();
        if (seen.includes('data:')) first = Number(process.hrtime.bigint() - start) / 1e6;
      }
      if (i === requests - 1) events += (chunk.toString().match(DELTA) ?? []).length / (RESPONSES ? 1 : 2);
    }
    times.push(first);
  }
  await client.close();
  return { first: median(times), events };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const spread = (values: number[], digits = 0) => `${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)}`;
const signed = (ms: number) => `${ms < 0 ? '' : '+'}${ms.toFixed(3)}`;

const upstream = await startServer('bench/stream-upstream.ts', { EVENTS: String(EVENTS) }, PATH);
const bare = await startServer('bench/stream-proxy.ts', { UPSTREAM: upstream.url }, PATH);
const portkeyInstall = { version: PORTKEY_VERSION, honoNodeServer: PORTKEY_STREAMING_HONO };
const portkey = await startPortkey(portkeyInstall);
const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0' });
await routeHaikuTo(gateway.url, upstream.url, RESPONSES ? 'openai' : 'messages');
const key = await benchKey(gateway.url);

const targets: Target[] = [
  { name: 'upstream, called directly', url: `${upstream.url}${PATH}`, headers: {}, pid: upstream.child.pid! },
  { name: 'bare Node streaming proxy', url: `${bare.url}${PATH}`, headers: {}, pid: bare.child.pid! },
  { name: portkeyLabel(portkeyInstall), url: `${portkey.url}${PATH}`, headers: RESPONSES ? portkeyOpenAIHeaders(upstream.url) : portkeyMessagesHeaders(upstream.url), pid: portkey.pid },
  { name: 'this gateway (auth, rate limit, billing)', url: `${gateway.url}${PATH}`, headers: RESPONSES ? { authorization: `Bearer ${key}` } : { 'x-api-key': key }, pid: gateway.child.pid! },
];
const [direct, bareTarget, portkeyTarget, ours] = targets as [Target, Target, Target, Target];

// Every target must deliver every event before anything is measured. A Portkey that fails them (as
// with PORTKEY_HONO_NODE_SERVER=1.14.2 or later: 500 "Something went wrong") is reported, not measured.
const broken: string[] = [];
for (const target of [...targets]) {
  const { events } = await probeOnce(target, 1);
  if (events === EVENTS) continue;
  if (target !== portkeyTarget) throw new Error(`${target.name} delivered ${events} of ${EVENTS} events`);
  broken.push(`${target.name} delivered ${events} of ${EVENTS} events (every streamed call failed), so it is left out`);
  targets.splice(targets.indexOf(target), 1);
}
// Warm-up: three loads each (see bench/text.ts: V8 recompiles after the first loads' sockets close).
for (const target of targets) {
  for (let i = 0; i < 3; i++) await loadOnce(target, 2);
  await probeOnce(target, 50);
}

const loads = new Map(targets.map((t) => [t, [] as Awaited<ReturnType<typeof loadOnce>>[]]));
const probes = new Map(targets.map((t) => [t, [] as number[]]));
for (let round = 0; round < ROUNDS; round++) {
  for (const target of targets) loads.get(target)!.push(await loadOnce(target, SECONDS));
  for (const target of targets) probes.get(target)!.push((await probeOnce(target, PROBE_REQUESTS)).first);
  const e = (t: Target) => loads.get(t)![round]!.events;
  console.error(`round ${round + 1}: ${targets.map((t) => `${Math.round(e(t))}`).join(' / ')} events/s; ours/bare ${((100 * e(ours)) / e(bareTarget)).toFixed(0)}%`);
}

const perRound = (of: (round: number) => number) => Array.from({ length: ROUNDS }, (_, i) => of(i));
const events = (t: Target, i: number) => loads.get(t)![i]!.events;
const vsBare = perRound((i) => (100 * events(ours, i)) / events(bareTarget, i));
const portkeyRan = targets.includes(portkeyTarget);
const vsPortkey = portkeyRan ? perRound((i) => events(ours, i) / events(portkeyTarget, i)) : [];
const cpu = (t: Target) => median(loads.get(t)!.map((x) => x.cpu));
const added = (t: Target) => perRound((i) => probes.get(t)![i]! - probes.get(direct)![i]!);

const lines = [
  `${machine()}; ${PATH}: ${EVENTS} events of ~20 tokens per stream; ${ROUNDS} interleaved rounds of ${SECONDS} s per target at 50 connections, then ${PROBE_REQUESTS} sequential streams per target on one keep-alive connection`,
  '',
  '| target | events/s (median round) | spread over rounds | streams/s | p50 ms per stream | bytes per stream | failed | first event p50 ms | added to first event vs direct (median, spread) | server CPU µs per stream (median round) |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...targets.map((t, n) => {
    const l = loads.get(t)!;
    const a = added(t);
    return `| ${t.name} | ${Math.round(median(l.map((x) => x.events)))} | ${spread(l.map((x) => x.events))} | ${Math.round(median(l.map((x) => x.streams)))} | ${median(l.map((x) => x.p50))} | ${Math.round(median(l.map((x) => x.bytes)))} | ${l.reduce((s, x) => s + x.failed, 0)} | ${median(probes.get(t)!).toFixed(3)} | ${n === 0 ? '-' : `${signed(median(a))} (${spread(a, 3)})`} | ${Math.round(median(l.map((x) => x.cpu)))} |`;
  }),
  '',
  `This gateway vs the bare proxy, per round: ${vsBare.map((v) => `${v.toFixed(0)}%`).join(', ')}; median **${median(vsBare).toFixed(1)}%** (target >= 85%).`,
  portkeyRan ? `This gateway vs Portkey, per round: ${vsPortkey.map((v) => `${v.toFixed(1)}x`).join(', ')}; median **${median(vsPortkey).toFixed(1)}x** (target >= 5x).` : `Portkey: ${broken.join('; ')}.`,
  `Server CPU per stream (median round): this gateway ${Math.round(cpu(ours))} µs, the bare proxy ${Math.round(cpu(bareTarget))} µs${portkeyRan ? `, Portkey ${Math.round(cpu(portkeyTarget))} µs (${(cpu(portkeyTarget) / cpu(ours)).toFixed(1)}x this gateway's)` : ''}.`,
  `Added time to first event, per round: ${added(ours).map(signed).join(', ')} ms; median **${signed(median(added(ours)))} ms** (target < 1 ms); the bare proxy's: ${signed(median(added(bareTarget)))} ms${portkeyRan ? `, Portkey's: ${signed(median(added(portkeyTarget)))} ms` : ''}.`,
];
console.log(`\n${lines.join('\n')}\n`);
process.exit(0);
