import autocannon from 'autocannon';
import { createDb } from '../src/db/index.ts';
import { ADMIN, benchKey, load, machine, pinSelf, startServer, table, tempSqlite, type Measured } from './lib.ts';

// Submit throughput (receipts/s) next to the balance route, on SQLite and (BENCH_POSTGRES=...) on
// Postgres; then how long 5,000 simulated tasks with zero latency take to all reach `completed`.
pinSelf();
const image = JSON.stringify({ model: 'imggen-2', prompt: 'a lighthouse at dusk', size: '16:9', resolution: '1k' });

async function submitVsBalance(label: string, databaseUrl: string, extra: Record<string, string> = {}): Promise<Measured[]> {
  const gateway = await startServer('src/main.ts', { DATABASE_URL: databaseUrl, ADMIN_TOKEN: ADMIN, WORKERS: '0', ...extra });
  const key = await benchKey(gateway.url);
  const auth = { authorization: `Bearer ${key}` };
  const rows = [
    await load(`GET /v1/balance (${label})`, { url: `${gateway.url}/v1/balance`, headers: auth }),
    await load(`POST /v1/images/generations (${label})`, {
      url: `${gateway.url}/v1/images/generations`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: image,
    }),
  ];
  gateway.child.kill('SIGKILL');
  return rows;
}

async function drain(label: string, databaseUrl: string, tasks: number, extra: Record<string, string> = {}) {
  const gateway = await startServer('src/main.ts', { DATABASE_URL: databaseUrl, ADMIN_TOKEN: ADMIN, WORKERS: '64', SIMULATOR_LATENCY_MS: '0', JOB_POLL_MS: '20', ...extra });
  const key = await benchKey(gateway.url);
  const { db, close } = createDb(databaseUrl);
  const started = Date.now();
  await autocannon({
    url: `${gateway.url}/v1/images/generations`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: image,
    connections: 50,
    amount: tasks,
  });
  const submitted = Date.now() - started;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const row = await db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'completed').executeTakeFirstOrThrow();
    if (Number(row.n) >= tasks || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const total = Date.now() - started;
  await close();
  gateway.child.kill('SIGKILL');
  return `| ${label} | ${tasks} | ${(submitted / 1000).toFixed(1)} s | ${(total / 1000).toFixed(1)} s | ${Math.round(tasks / (total / 1000))} tasks/s |`;
}

const rows = await submitVsBalance('SQLite', tempSqlite());
if (process.env.BENCH_POSTGRES) rows.push(...(await submitVsBalance('Postgres', process.env.BENCH_POSTGRES, { REDIS_URL: process.env.BENCH_REDIS ?? '' })));

const tasks = Number(process.env.BENCH_TASKS ?? 5000);
const drains = [await drain('SQLite', tempSqlite(), tasks)];
if (process.env.BENCH_POSTGRES_DRAIN) drains.push(await drain('Postgres', process.env.BENCH_POSTGRES_DRAIN, tasks, { REDIS_URL: process.env.BENCH_REDIS ?? '' }));

console.log(`\n${machine()}\n\n${table(rows)}\n`);
console.log(`| store | tasks | all submitted after | all completed after | throughput |\n|---|---|---|---|---|\n${drains.join('\n')}\n`);
process.exit(0);
