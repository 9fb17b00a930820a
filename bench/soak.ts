import fs from 'node:fs';
import autocannon from 'autocannon';
import { ADMIN, benchKey, json, machine, startServer } from './lib.ts';

// Mixed traffic (balance, submits, polls, text) for SOAK_SECONDS (default 600) against two gateway
// processes on Postgres + Redis; throughput, p50/p99 and each process's memory over time.
// BENCH_POSTGRES=postgres://.../empty_db BENCH_REDIS=redis://... npx tsx bench/soak.ts
const seconds = Number(process.env.SOAK_SECONDS ?? 600);
if (!process.env.BENCH_POSTGRES || !process.env.BENCH_REDIS) throw new Error('set BENCH_POSTGRES and BENCH_REDIS');
const env = { DATABASE_URL: process.env.BENCH_POSTGRES, REDIS_URL: process.env.BENCH_REDIS, ADMIN_TOKEN: ADMIN, SIMULATOR_LATENCY_MS: '200' };
const gateways = [await startServer('src/main.ts', env), await startServer('src/main.ts', env)];
const key = await benchKey(gateways[0]!.url);
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const first = await json('POST', `${gateways[0]!.url}/v1/images/generations`, auth, { model: 'imggen-2', prompt: 'soak' });
const taskId = first.data[0].task_id;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const samples: string[] = [];
const sample = () => samples.push(`| ${Math.round((Date.now() - started) / 1000)} s | ${gateways.map((g) => rssMb(g.child.pid!).toFixed(0)).join(' MB | ')} MB |`);
const started = Date.now();
sample();
const timer = setInterval(sample, 60_000);

const requests: autocannon.Request[] = [
  { method: 'GET', path: '/v1/balance' },
  { method: 'POST', path: '/v1/images/generations', body: JSON.stringify({ model: 'imggen-2', prompt: 'a soak test' }) },
  { method: 'GET', path: `/v1/tasks/${taskId}` },
  { method: 'POST', path: '/v1/messages', body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'soak' }] }) },
];
const results = await Promise.all(gateways.map((g) => autocannon({ url: g.url, connections: 10, duration: seconds, headers: auth, requests })));
clearInterval(timer);
sample();

console.log(`\n${machine()}, ${seconds} s, 2 processes on Postgres + Redis, 10 connections each\n`);
console.log('| process | requests/s | p50 ms | p99 ms | non-2xx | errors |\n|---|---|---|---|---|---|');
results.forEach((r, i) => console.log(`| ${i + 1} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} | ${r.errors} |`));
console.log(`\nResident memory of each process:\n\n| after | process 1 | process 2 |\n|---|---|---|\n${samples.join('\n')}\n`);
process.exit(0);
