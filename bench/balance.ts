import { ADMIN, benchKey, load, machine, pinSelf, startServer, table, tempSqlite, type Measured } from './lib.ts';

// Authenticated GET /v1/balance against a bare Fastify route, in the same run.
// Optional: BENCH_POSTGRES=postgres://... BENCH_REDIS=redis://... adds the gateway on Postgres + Redis.
pinSelf();
const rows: Measured[] = [];
const bare = await startServer('bench/bare-server.ts', {}, '/bare');
rows.push(await load('bare Fastify route', { url: `${bare.url}/bare` }));

const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0' });
const key = await benchKey(gateway.url);
rows.push(await load('GET /v1/balance (SQLite, in-process limits)', { url: `${gateway.url}/v1/balance`, headers: { authorization: `Bearer ${key}` } }));

if (process.env.BENCH_POSTGRES) {
  const pg = await startServer('src/main.ts', { DATABASE_URL: process.env.BENCH_POSTGRES, REDIS_URL: process.env.BENCH_REDIS ?? '', ADMIN_TOKEN: ADMIN, WORKERS: '0' });
  const pgKey = await benchKey(pg.url);
  rows.push(await load(`GET /v1/balance (Postgres${process.env.BENCH_REDIS ? ' + Redis' : ''})`, { url: `${pg.url}/v1/balance`, headers: { authorization: `Bearer ${pgKey}` } }));
}

console.log(`\n${machine()}\n\n${table(rows, rows[0])}\n`);
process.exit(0);
