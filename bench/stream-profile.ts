import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchKey, pinSelf, RESPONSES_STREAM_BODY, routeHaikuTo, startServer, STREAM_BODY, tempSqlite, ADMIN, WHOLE_BODY } from './lib.ts';

// Where a streamed messages passthrough spends the gateway's CPU: the gateway runs under
// `node --cpu-prof` while 50 connections stream from bench/stream-upstream.ts through it for
// PROFILE_SECONDS (10); it is then stopped with SIGTERM (which writes the profile) and the main
// thread's samples are summed per function (self time) and per layer, in µs per stream (the
// profile covers the whole process, start-up and warm-up included: compare runs, not absolutes).
//   npx tsx bench/stream-profile.ts
// PROFILE_TEXT=1: the same for whole (non-streamed) messages calls, against bench/text.ts's upstream and
// bare proxy; "per stream" then reads "per call".
// PROFILE_FORMAT=responses: a streamed /v1/responses passthrough to an `openai` channel.
pinSelf();
const TEXT = process.env.PROFILE_TEXT === '1';
const RESPONSES = process.env.PROFILE_FORMAT === 'responses';
const PATH = RESPONSES ? '/v1/responses' : '/v1/messages';
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const EVENTS = 200;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-stream-prof-'));
const body = TEXT ? WHOLE_BODY : RESPONSES ? RESPONSES_STREAM_BODY : STREAM_BODY;

const upstream = TEXT ? await startServer('bench/fake-messages-upstream.ts', {}, '/v1/messages') : await startServer('bench/stream-upstream.ts', { EVENTS: String(EVENTS) }, PATH);
const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0', NODE_ARGS: `--cpu-prof --cpu-prof-dir=${dir}` });
await routeHaikuTo(gateway.url, upstream.url, RESPONSES ? 'openai' : 'messages');
const key = await benchKey(gateway.url);
const load = (duration: number) => autocannon({ url: `${gateway.url}${PATH}`, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, authorization: `Bearer ${key}` }, body, connections: 50, duration });
/** utime + stime of every thread of a process, in clock ticks (1/100 s); see bench/ab-cpu.ts. */
const cpuTicks = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
/** µs of CPU per stream of a server under `run` (CPU time is steadier than throughput on a shared VM). */
async function cpuPerStream(pid: number, run: () => Promise<autocannon.Result>) {
  const ticks = cpuTicks(pid);
  const result = await run();
  return { result, us: ((cpuTicks(pid) - ticks) * 10_000) / result.requests.total };
}
// The bare proxy under the same load first, for scale.
const bare = await startServer(TEXT ? 'bench/bare-proxy.ts' : 'bench/stream-proxy.ts', { UPSTREAM: upstream.url }, PATH);
const loadBare = (duration: number) => autocannon({ url: `${bare.url}${PATH}`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 50, duration });
await loadBare(3);
const bareCpu = await cpuPerStream(bare.child.pid!, () => loadBare(SECONDS));
bare.child.kill('SIGKILL');
await load(3);
const { result, us: gatewayCpu } = await cpuPerStream(gateway.child.pid!, () => load(SECONDS));
gateway.child.kill('SIGTERM');
await once(gateway.child, 'exit');

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
// The main thread's profile is the first one written (worker threads write their own).
const file = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()[0]!;
const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; endTime: number };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
// Only the measured load: the profile ends with the process, a moment after the load ends (start-up
// and warm-up, which compile the app, are left out).
const window = { from: profile.endTime - (SECONDS * 1e6 + 300_000), to: profile.endTime - 300_000 };
let at = profile.endTime - profile.timeDeltas.reduce((sum, d) => sum + d, 0);
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= window.from && at < window.to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const streams = result.requests.total;

function layer(url: string, name: string): string {
  if (name === '(idle)' || name === '(program)') return name;
  if (name === '(garbage collector)') return 'GC';
  if (url.includes('/undici/')) return 'undici';
  if (url.includes('/fastify') || url.includes('/find-my-way/') || url.includes('/avvio/')) return 'fastify';
  if (url.includes('/src/') || url.includes('/dist/server/')) return 'our code';
  if (url.startsWith('node:')) return 'node core';
  if (!url) return `native ${name}`;
  return 'other modules';
}
const perFunction = new Map<string, number>();
const perLayer = new Map<string, number>();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
  perFunction.set(name, (perFunction.get(name) ?? 0) + us);
  const l = layer(url, functionName);
  perLayer.set(l, (perLayer.get(l) ?? 0) + us);
}
const rows = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => `${(us / streams).toFixed(1).padStart(8)} µs  ${name}`)
    .join('\n');
console.log(`${streams} streams in ${SECONDS} s (${Math.round(result.requests.average)}/s), gateway CPU ${Math.round(gatewayCpu)} µs per stream (every thread, from /proc; bare proxy ${Math.round(bareCpu.us)} µs at ${Math.round(bareCpu.result.requests.average)}/s); profile ${path.join(dir, file)}\n\nper layer (µs of the main thread per stream):\n${rows(perLayer, 20)}\n\ntop functions (self):\n${rows(perFunction, Number(process.env.PROFILE_TOP ?? 40))}`);
process.exit(0);
