import autocannon from 'autocannon';
import { startReceiver } from '../test/support/receiver.ts';
import { ADMIN, benchKey, machine, pinSelf, startServer, tempSqlite } from './lib.ts';

// 1,000 concurrent tasks with callbacks to a local receiver: every one must arrive (at least once;
// the receiver de-duplicates by id), and the delivery throughput is recorded.
pinSelf();
const tasks = Number(process.env.BENCH_TASKS ?? 1000);
const receiver = await startReceiver(() => 200);
const gateway = await startServer('src/main.ts', {
  DATABASE_URL: process.env.BENCH_POSTGRES ?? tempSqlite(),
  REDIS_URL: process.env.BENCH_REDIS ?? '',
  ADMIN_TOKEN: ADMIN,
  WORKERS: '64',
  SIMULATOR_LATENCY_MS: '0',
  JOB_POLL_MS: '20',
  // The receiver is on 127.0.0.1: the widening is for this bench only.
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOWED_PORTS: '*',
  PUBLIC_BASE_URL: 'http://gateway.bench',
});
const key = await benchKey(gateway.url);
const started = Date.now();
const submit = await autocannon({
  url: `${gateway.url}/v1/images/generations`,
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'imggen-2', prompt: 'callback bench', webhook: receiver.url }),
  connections: 100,
  amount: tasks,
});
const submittedAfter = Date.now() - started;
const unique = () => new Set(receiver.received.map((r) => JSON.parse(r.body).id)).size;
const deadline = Date.now() + 300_000;
while (unique() < tasks && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
const allAfter = Date.now() - started;
const firstAt = Math.min(...receiver.received.map((r) => r.at));
const lastAt = Math.max(...receiver.received.map((r) => r.at));
console.log(`\n${machine()}\n`);
console.log('| tasks | receipts (2xx) | callbacks received | distinct ids | all submitted after | all delivered after | delivery rate |');
console.log('|---|---|---|---|---|---|---|');
console.log(
  `| ${tasks} | ${submit['2xx']} | ${receiver.received.length} | ${unique()} | ${(submittedAfter / 1000).toFixed(1)} s | ${(allAfter / 1000).toFixed(1)} s | ${Math.round(receiver.received.length / Math.max(0.001, (lastAt - firstAt) / 1000))} callbacks/s |`,
);
await receiver.close();
process.exit(unique() === tasks ? 0 : 1);
