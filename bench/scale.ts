import autocannon from 'autocannon';
import { ADMIN, benchKey, machine, startServer } from './lib.ts';

// Throughput of one gateway process against two, on Postgres + Redis, in the same run. Servers are
// not pinned here: the point is what a second process buys on this 2-core machine.
if (!process.env.BENCH_POSTGRES || !process.env.BENCH_REDIS) throw new Error('set BENCH_POSTGRES and BENCH_REDIS');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const env = { DATABASE_URL: process.env.BENCH_POSTGRES, REDIS_URL: process.env.BENCH_REDIS, ADMIN_TOKEN: ADMIN, WORKERS: '0', NO_PIN: '1' };

async function run(urls: string[], path: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) {
  const results = await Promise.all(urls.map((url) => autocannon({ url: `${url}${path}`, method, headers, body, connections: Math.ceil(50 / urls.length), duration: seconds })));
  return { rps: results.reduce((s, r) => s + r.requests.average, 0), p99: Math.max(...results.map((r) => r.latency.p99)) };
}

const one = await startServer('src/main.ts', env);
const two = await startServer('src/main.ts', env);
const key = await benchKey(one.url);
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const submit = JSON.stringify({ model: 'imggen-2', prompt: 'scale' });
const rows: string[] = [];
for (const [name, path, method, body] of [['GET /v1/balance', '/v1/balance', 'GET', undefined], ['POST /v1/images/generations', '/v1/images/generations', 'POST', submit]] as const) {
  const single = await run([one.url], path, method, auth, body);
  const double = await run([one.url, two.url], path, method, auth, body);
  rows.push(`| ${name} | ${Math.round(single.rps)} | ${Math.round(double.rps)} | ${(double.rps / single.rps).toFixed(2)} | ${single.p99} / ${double.p99} |`);
}
console.log(`\n${machine()}\n\n| route | 1 process (req/s) | 2 processes (req/s) | ratio | p99 ms (1 / 2) |\n|---|---|---|---|---|\n${rows.join('\n')}\n`);
process.exit(0);
