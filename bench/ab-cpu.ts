import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { agentBody } from './agent-body.ts';
import { ADMIN, benchKey, messagesUpstream, pinSelf, RESPONSES_STREAM_BODY, ROOT, routeHaikuTo, startServer, STREAM_BODY, tempSqlite, WHOLE_BODY } from './lib.ts';

// A/B of two gateway builds' CPU per text call, for changes of a few percent. This VM's speed drifts
// by a half within minutes, so two builds measured one after the other differ by more than most
// changes do. Here both run at the same time on the same core (core 0, with the upstream), each
// loaded by 25 connections from core 1: both see the same machine, and each one's CPU time per call
// (from /proc, every thread of the process) is compared within the same seconds. Fresh processes
// per pair, since one process can run a few percent off another of the same build all along.
//
//   git worktree add ../gw-base <commit> && ln -s "$PWD/node_modules" ../gw-base/node_modules
//   BASELINE=../gw-base npx tsx bench/ab-cpu.ts
//
// BASELINE: the other checkout (default: this one, an A/A run that shows the noise); A_ENV / B_ENV:
// extra environment for the baseline / this checkout ("KEY=value,KEY=value"; NODE_ARGS=--flag=value
// passes flags to node); AB_PAIRS (3),
// AB_ROUNDS per pair (4), AB_SECONDS per round (3); AB_BODY=agent: an agent-sized ~35 KB body (bench/agent-body.ts)
// instead of a one-line prompt, at 5 connections per side; AB_BODY=stream: streamed calls of 200 events
// (bench/stream-upstream.ts), CPU per stream; AB_BODY=chat: whole calls on /v1/chat/completions (translated
// to the messages upstream); AB_BODY=responses: streamed POST /v1/responses through an openai channel
// (forwarded as it came, the answer stored for previous_response_id), CPU per stream.
pinSelf();
const PAIRS = Number(process.env.AB_PAIRS ?? 3);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);
const AGENT = process.env.AB_BODY === 'agent';
const STREAM = process.env.AB_BODY === 'stream';
const CHAT = process.env.AB_BODY === 'chat';
const RESPONSES = process.env.AB_BODY === 'responses';
const body = AGENT ? agentBody('chatgen-4-haiku') : STREAM ? STREAM_BODY : RESPONSES ? RESPONSES_STREAM_BODY : WHOLE_BODY;
const PATH = CHAT ? '/v1/chat/completions' : RESPONSES ? '/v1/responses' : '/v1/messages';
const envOf = (spec = '') => Object.fromEntries(spec.split(',').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const sides = [
  { name: 'baseline', entry: path.resolve(process.env.BASELINE ?? ROOT, 'src/main.ts'), env: envOf(process.env.A_ENV) },
  { name: 'this checkout', entry: path.join(ROOT, 'src/main.ts'), env: envOf(process.env.B_ENV) },
];

/** utime + stime of every thread of the process, in clock ticks (1/100 s). */
function cpuTicks(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const upstream = await messagesUpstream(STREAM || RESPONSES);

/** A gateway whose only route for the model is a messages channel to the upstream; auth, rate limit and billing on. */
async function gateway(entry: string, env: Record<string, string>) {
  const server = await startServer(entry, { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0', ...env });
  await routeHaikuTo(server.url, upstream.url, RESPONSES ? 'openai' : 'messages');
  const key = await benchKey(server.url);
  return { ...server, headers: { 'content-type': 'application/json', ...(CHAT || RESPONSES ? { authorization: `Bearer ${key}` } : { 'x-api-key': key }) } };
}

type Gateway = Awaited<ReturnType<typeof gateway>>;

/** Loads both at once; CPU microseconds per call of each. */
async function loadBoth(both: Gateway[], seconds: number): Promise<number[]> {
  const before = both.map((g) => cpuTicks(g.child.pid!));
  const results = await Promise.all(both.map((g) => autocannon({ url: `${g.url}${PATH}`, method: 'POST', headers: g.headers, body, connections: AGENT ? 5 : 25, duration: seconds })));
  return both.map((g, i) => ((cpuTicks(g.child.pid!) - before[i]!) * 10_000) / Math.max(1, results[i]!.requests.total - results[i]!.non2xx));
}

const ratios: number[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  const both = [await gateway(sides[0]!.entry, sides[0]!.env), await gateway(sides[1]!.entry, sides[1]!.env)];
  // Warm-up: three loads, as in text.ts (V8 recompiles the socket paths after connections close).
  for (let i = 0; i < 3; i++) await loadBoth(both, 2);
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b] = (await loadBoth(both, SECONDS)) as [number, number];
    ratios.push(b / a);
    console.error(`pair ${pair + 1} round ${round + 1}: baseline ${a.toFixed(0)} µs, this checkout ${b.toFixed(0)} µs per call; ratio ${(b / a).toFixed(3)}`);
  }
  for (const g of both) g.child.kill('SIGKILL');
}
const sorted = [...ratios].sort((x, y) => x - y);
console.log(`CPU per call, this checkout / baseline: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)} over ${ratios.length} rounds (${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}); below 1 is cheaper`);
process.exit(0);
