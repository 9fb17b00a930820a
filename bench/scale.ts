import autocannon from 'autocannon';
import { pidsOf, startCpuCount, startWaitSampling } from './cpu-share.ts';
import { ADMIN, benchKey, machine, startServer } from './lib.ts';

// Throughput of one gateway process against two, on Postgres + Redis, in the same run. Servers are
// not pinned here: the point is what a second process buys on this 2-core machine.
if (!process.env.BENCH_POSTGRES || !process.env.BENCH_REDIS) throw new Error('set BENCH_POSTGRES and BENCH_REDIS');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const env = { DATABASE_URL: process.env.BENCH_POSTGRES, REDIS_URL: process.env.BENCH_REDIS, ADMIN_TOKEN: ADMIN, WORKERS: '0', NO_PIN: '1' };

const one = await startServer('src/main.ts', env);
const two = await startServer('src/main.ts', env);
const groups = {
  'gateway 1': () => [one.child.pid!],
  'gateway 2': () => [two.child.pid!],
  postgres: () => pidsOf('postgres'),
  redis: () => pidsOf('redis-server'),
  'load generator': () => [process.pid],
};
const profiles: string[] = [];

async function run(urls: string[], path: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string, keys?: string[]) {
  const cpu = startCpuCount(groups);
  const waits = startWaitSampling(process.env.BENCH_POSTGRES!);
  // With `keys`, each request picks one of several accounts' keys at random.
  const rotate = keys && [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${keys[Math.floor(Math.random() * keys.length)]}` } }) }];
  const results = await Promise.all(
    urls.map((url) => autocannon({ url: `${url}${path}`, method, headers, body, connections: Math.ceil(50 / urls.length), duration: seconds, ...(rotate ? { requests: rotate } : {}) })),
  );
  const shares = cpu();
  const waiting = await waits();
  const cores = Object.entries(shares).map(([name, share]) => `${name} ${share.toFixed(2)}`).join(', ');
  const sessions = Object.entries(waiting).sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label} ${n.toFixed(1)}`).join('; ');
  profiles.push(`- ${method} ${path}${keys ? ' (50 accounts)' : ''} on ${urls.length} process(es): cores used: ${cores}, total ${Object.values(shares).reduce((a, b) => a + b, 0).toFixed(2)} of 2. Postgres sessions on average: ${sessions}`);
  return { rps: results.reduce((s, r) => s + r.requests.average, 0), p99: Math.max(...results.map((r) => r.latency.p99)) };
}

const key = await benchKey(one.url);
// Every submit debits its account's row: one account makes every submit wait for the same row lock.
const manyKeys = await Promise.all(Array.from({ length: 50 }, () => benchKey(one.url)));
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const submit = JSON.stringify({ model: 'imggen-2', prompt: 'scale' });
const rows: string[] = [];
const cases = [
  ['GET /v1/balance', '/v1/balance', 'GET', undefined, undefined],
  ['POST /v1/images/generations (one account)', '/v1/images/generations', 'POST', submit, undefined],
  ['POST /v1/images/generations (50 accounts)', '/v1/images/generations', 'POST', submit, manyKeys],
] as const;
for (const [name, path, method, body, keys] of cases) {
  const single = await run([one.url], path, method, auth, body, keys);
  const double = await run([one.url, two.url], path, method, auth, body, keys);
  rows.push(`| ${name} | ${Math.round(single.rps)} | ${Math.round(double.rps)} | ${(double.rps / single.rps).toFixed(2)} | ${single.p99} / ${double.p99} |`);
}
console.log(`\n${machine()}\n\n| route | 1 process (req/s) | 2 processes (req/s) | ratio | p99 ms (1 / 2) |\n|---|---|---|---|---|\n${rows.join('\n')}\n\n${profiles.join('\n')}\n`);
process.exit(0);
