import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { agentBody } from './agent-body.ts';
import { ADMIN, benchKey, messagesUpstream, pinSelf, RESPONSES_STREAM_BODY, routeHaikuTo, startServer, STREAM_BODY, tempSqlite, WHOLE_BODY } from './lib.ts';

// Where the gateway's CPU goes, on CPU only: Linux `perf` samples the process (every thread, the
// kernel included) while 50 connections load it, and each sample is put down to the innermost
// JavaScript function on its stack (node --perf-basic-prof names them), or to GC when the collector
// is on the stack. V8's own profile (bench/stream-profile.ts) samples wall time instead: with the
// upstream on the same core, the time the gateway waits preempted lands on the function it was in
// (mostly `writev`, whose wake-up of the upstream hands it the core). Needs `perf`
// (apt-get install linux-perf); µs per call are scaled to the CPU time /proc measured.
//   npx tsx bench/perf-profile.ts
// PROFILE_STREAM=1: streamed /v1/messages (200 events) instead of whole calls; PROFILE_BODY=agent:
// an agent-sized body (bench/agent-body.ts); PROFILE_BARE=1: the bare proxy instead of the gateway;
// PROFILE_BARE=fastify: the bare proxy in a Fastify route (bench/fastify-proxy.ts); PROFILE_CHAT=1: whole calls on /v1/chat/completions (translated to the messages upstream);
// PROFILE_STREAM=responses: streamed POST /v1/responses through an openai channel (forwarded);
// PROFILE_SECONDS (8), PROFILE_TOP (40).
pinSelf();
if (spawnSync('perf', ['--version']).status !== 0) {
  console.error('perf is not installed (apt-get install linux-perf)');
  process.exit(1);
}
const RESPONSES = process.env.PROFILE_STREAM === 'responses';
const STREAM = process.env.PROFILE_STREAM === '1' || RESPONSES;
const FRAMEWORK = process.env.PROFILE_BARE === 'fastify';
const BARE = process.env.PROFILE_BARE === '1' || FRAMEWORK;
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const body = RESPONSES ? RESPONSES_STREAM_BODY : STREAM ? STREAM_BODY : process.env.PROFILE_BODY === 'agent' ? agentBody('chatgen-4-haiku') : WHOLE_BODY;
const connections = process.env.PROFILE_BODY === 'agent' ? 10 : 50;
const CHAT = process.env.PROFILE_CHAT === '1' && !BARE && !STREAM;

const upstream = await messagesUpstream(STREAM);
const headers: Record<string, string> = { 'content-type': 'application/json' };
// --perf-basic-prof writes /tmp/perf-<pid>.map (perf reads the JIT's function names there); V8's log it turns on goes nowhere.
const PERF_NODE_ARGS = '--perf-basic-prof --no-logfile-per-isolate --logfile=/dev/null';
const target = BARE
  ? await startServer(STREAM ? 'bench/stream-proxy.ts' : FRAMEWORK ? 'bench/fastify-proxy.ts' : 'bench/bare-proxy.ts', { UPSTREAM: upstream.url, NODE_ARGS: PERF_NODE_ARGS }, '/v1/messages')
  : await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0', NODE_ARGS: PERF_NODE_ARGS });
if (!BARE) {
  await routeHaikuTo(target.url, upstream.url, RESPONSES ? 'openai' : 'messages');
  const key = await benchKey(target.url);
  if (CHAT || RESPONSES) headers.authorization = `Bearer ${key}`;
  else headers['x-api-key'] = key;
}
const pid = target.child.pid!;
const load = (duration: number) => autocannon({ url: `${target.url}${CHAT ? '/v1/chat/completions' : RESPONSES ? '/v1/responses' : '/v1/messages'}`, method: 'POST', headers, body, connections, duration });
const cpuTicks = () => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

// Three warm-up loads, as in bench/text.ts: V8 compiles again after the first loads' sockets close,
// and that compilation (on this core) would otherwise show in the profile as native time.
for (let i = 0; i < 3; i++) await load(3);
const data = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-perf-')), 'perf.data');
const ticks = cpuTicks();
const recorder = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2999', '-g', '-p', String(pid), '-o', data], { stdio: 'ignore' });
const result = await load(SECONDS);
recorder.kill('SIGINT');
await once(recorder, 'exit');
const calls = result.requests.total;
const cpuPerCall = ((cpuTicks() - ticks) * 10_000) / calls;
target.child.kill('SIGKILL');

const script = spawnSync('perf', ['script', '-i', data, '-F', 'ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
const GC = /Scavenge|Heap::|MarkCompact|ConcurrentMarking|Sweeper|MarkingVisitor|ArrayBufferSweeper/;
const JS = /JS:\S?(\S*) (\S+?):(\d+)/;

/** The layer of a sample: GC, else the innermost JavaScript function's module, else native or kernel. */
function attribute(frames: string[]): { layer: string; fn: string } {
  const kernel = frames[0]?.includes('[kernel.kallsyms]') ? ' (kernel)' : '';
  if (frames.some((f) => GC.test(f))) return { layer: 'GC', fn: 'GC' };
  for (const [i, frame] of frames.entries()) {
    const js = JS.exec(frame);
    if (!js) continue;
    // SQLite's own code, called from ours (better-sqlite3 runs statements on the main thread).
    if (frames.slice(0, i).some((f) => f.includes('better_sqlite3.node'))) return { layer: `sqlite${kernel}`, fn: `sqlite${kernel} | from ${js[1] || '(anonymous)'}` };
    const [, name, url, line] = js;
    const module = url!.split('node_modules/')[1]?.split('/')[0];
    const layer = url!.startsWith('node:')
      ? `node:${url!.split(':')[1]!.split('/').at(-1)}`
      : module === undefined
        ? 'ours'
        : /^(fastify|find-my-way|avvio|light-my-request)$/.test(module)
          ? 'fastify'
          : module;
    return { layer: layer + kernel, fn: `${layer}${kernel} | ${name || '(anonymous)'} ${url!.split('/').at(-1)}:${line}` };
  }
  const leaf = (frames[0] ?? '?').replace(/^\S+\s+/, '').replace(/\s+\(.*\)$/, '');
  return kernel ? { layer: 'kernel', fn: `kernel | ${leaf}` } : { layer: 'native', fn: `native | ${leaf}` };
}

const layers = new Map<string, number>();
const functions = new Map<string, number>();
let samples = 0;
for (const block of script.stdout.split('\n\n')) {
  const frames = block.split('\n').map((line) => line.trim()).filter(Boolean);
  if (frames.length === 0) continue;
  samples++;
  const { layer, fn } = attribute(frames);
  layers.set(layer, (layers.get(layer) ?? 0) + 1);
  functions.set(fn, (functions.get(fn) ?? 0) + 1);
}
const rows = (counts: Map<string, number>, n: number) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${((count / samples) * cpuPerCall).toFixed(1).padStart(8)} µs  ${name}`)
    .join('\n');
const what = `${BARE ? 'the bare proxy' : CHAT ? 'the gateway on /v1/chat/completions' : 'the gateway'}, ${STREAM ? 'streams' : process.env.PROFILE_BODY === 'agent' ? 'whole calls with an agent-sized body' : 'whole calls'}`;
console.log(`${what}: ${calls} in ${SECONDS} s (${Math.round(result.requests.average)}/s), ${cpuPerCall.toFixed(1)} µs of CPU per ${STREAM ? 'stream' : 'call'} (every thread, /proc; perf and --perf-basic-prof add some), ${samples} samples\n\nby layer (µs per ${STREAM ? 'stream' : 'call'}):\n${rows(layers, 25)}\n\nby function (innermost JavaScript frame; self time):\n${rows(functions, Number(process.env.PROFILE_TOP ?? 40))}`);
process.exit(0);
