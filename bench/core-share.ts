import fs from 'node:fs';
import autocannon from 'autocannon';
import { ADMIN, benchKey, pinSelf, routeHaikuTo, startServer, tempSqlite, WHOLE_BODY } from './lib.ts';
import { portkeyMessagesHeaders, startPortkey } from './portkey.ts';

// What each server on core 0 takes while bench/text.ts loads one of them: the bare proxy, Portkey and
// this gateway loaded in turn (whole /v1/messages calls, 50 connections, CORE_SHARE_SECONDS each, in
// CORE_SHARE_ROUNDS rounds), with every server process's CPU read from /proc over each window. It
// shows whether a server left busy by its own load takes core 0 from the next one (it would handicap
// whichever is measured after it), and each server's and the upstream's CPU per call, whose ratio is
// what the bench's throughput ratio comes to when core 0 is the limit.
//   npx tsx bench/core-share.ts
pinSelf();
const SECONDS = Number(process.env.CORE_SHARE_SECONDS ?? 5);
const ROUNDS = Number(process.env.CORE_SHARE_ROUNDS ?? 3);

const upstream = await startServer('bench/fake-messages-upstream.ts', {}, '/v1/messages');
const bare = await startServer('bench/bare-proxy.ts', { UPSTREAM: upstream.url }, '/v1/messages');
const portkey = await startPortkey();
const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0' });
await routeHaikuTo(gateway.url, upstream.url);
const key = await benchKey(gateway.url);

const processes: Record<string, number> = { upstream: upstream.child.pid!, bare: bare.child.pid!, portkey: portkey.pid, gateway: gateway.child.pid! };
const ticks = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const targets = [
  { name: 'bare', url: `${bare.url}/v1/messages`, headers: {} },
  { name: 'portkey', url: `${portkey.url}/v1/messages`, headers: portkeyMessagesHeaders(upstream.url) },
  { name: 'gateway', url: `${gateway.url}/v1/messages`, headers: { 'x-api-key': key } },
];
const load = (target: (typeof targets)[number], seconds: number) =>
  autocannon({ url: target.url, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: WHOLE_BODY, connections: 50, duration: seconds });

// Warm-up as in bench/text.ts (three loads each: V8 compiles again after the first loads' sockets close).
for (const target of targets) for (let i = 0; i < 3; i++) await load(target, 2);
for (let round = 1; round <= ROUNDS; round++) {
  for (const target of targets) {
    const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, ticks(pid)]));
    const result = await load(target, SECONDS);
    const calls = result.requests.total;
    const shares = Object.entries(processes).map(([name, pid]) => {
      const used = ticks(pid) - before[name]!; // 100 ticks a second
      return `${name} ${(used / SECONDS).toFixed(0)}%${name === target.name || name === 'upstream' ? ` (${((used * 10_000) / calls).toFixed(0)} µs/call)` : ''}`;
    });
    console.log(`round ${round}, ${target.name} loaded: ${Math.round(result.requests.average)} calls/s; core 0: ${shares.join(', ')}`);
  }
}
process.exit(0);
