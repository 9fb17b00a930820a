import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ADMIN, benchKey, messagesUpstream, pinSelf, ROOT, routeHaikuTo, startServer, STREAM_BODY, tempSqlite, WHOLE_BODY } from './lib.ts';

// Where a text call's garbage comes from: V8's sampling heap profiler (bench/alloc-sampler.mjs, in
// the server's own process) records every sampled allocation while 50 connections load it,
// collected objects included, and the bytes are summed per allocating function and per call site
// (the function and the three frames above it), in bytes per call. The CPU profile
// (bench/perf-profile.ts) shows GC as one line; this shows what feeds it. It found a closure over a
// loop's variables in a function called for every event of a stream (each call allocated the
// closure's context, used or not: ~10 KB per stream).
//   npx tsx bench/alloc-profile.ts
// ALLOC_STREAM=1: streamed /v1/messages (200 events) instead of whole calls; ALLOC_BARE=1: the bare
// proxy instead of the gateway; ALLOC_SECONDS (5), ALLOC_TOP (30).
pinSelf();
const STREAM = process.env.ALLOC_STREAM === '1';
const BARE = process.env.ALLOC_BARE === '1';
const SECONDS = Number(process.env.ALLOC_SECONDS ?? 5);
const TOP = Number(process.env.ALLOC_TOP ?? 30);
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-alloc-')), 'profile.json');
const env = { ALLOC_OUT: out, NODE_ARGS: `--import ${path.join(ROOT, 'bench/alloc-sampler.mjs')}` };

const upstream = await messagesUpstream(STREAM);
const target = BARE
  ? await startServer(STREAM ? 'bench/stream-proxy.ts' : 'bench/bare-proxy.ts', { UPSTREAM: upstream.url, ...env }, '/v1/messages')
  : await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0', ...env });
const headers: Record<string, string> = { 'content-type': 'application/json' };
if (!BARE) {
  await routeHaikuTo(target.url, upstream.url, 'messages');
  headers['x-api-key'] = await benchKey(target.url);
}
const load = (duration: number) => autocannon({ url: `${target.url}/v1/messages`, method: 'POST', headers, body: STREAM ? STREAM_BODY : WHOLE_BODY, connections: 50, duration });
// Warmed up as the CPU benches are: code still being compiled allocates as it goes.
for (let i = 0; i < 3; i++) await load(3);
// The child is `taskset`, which runs node in its own place: the signal reaches node.
const pid = target.child.pid!;
process.kill(pid, 'SIGUSR2');
const result = await load(SECONDS);
process.kill(pid, 'SIGUSR2');
for (let i = 0; i < 100 && !fs.existsSync(out); i++) await new Promise((r) => setTimeout(r, 100));
const profile = JSON.parse(fs.readFileSync(out, 'utf8')) as { head: Node; error?: string };
if (profile.error) throw new Error(profile.error);
target.child.kill('SIGKILL');

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}
const calls = result.requests.total;
const byFunction = new Map<string, number>();
const bySite = new Map<string, number>();
let total = 0;
const nameOf = ({ callFrame: f }: Node) => `${f.functionName || '(anonymous)'} ${f.url.split('/').at(-1)}:${f.lineNumber + 1}`;
const walk = (node: Node, above: string[]) => {
  const name = nameOf(node);
  total += node.selfSize;
  if (node.selfSize > 0) {
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    const site = [name, ...above.slice(-3).reverse()].join(' < ');
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, [...above, name]);
};
walk(profile.head, []);
const rows = (counts: Map<string, number>) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([name, bytes]) => `${String(Math.round(bytes / calls)).padStart(8)} B  ${name}`)
    .join('\n');
const unit = STREAM ? 'stream' : 'call';
console.log(`${BARE ? 'the bare proxy' : 'the gateway'}, ${STREAM ? 'streams' : 'whole calls'}: ${calls} in ${SECONDS} s, ${Math.round(total / calls)} bytes allocated per ${unit} (sampled)\n`);
console.log(`by allocating function (bytes per ${unit}):\n${rows(byFunction)}\n\nby site (the function < its three callers):\n${rows(bySite)}`);
process.exit(0);
