// CI helper: checks that Postgres and Redis answer, and creates or drops the run's own database.
// Exits non-zero when a service cannot be reached, so CI fails instead of skipping those suites.
import pg from 'pg';
import { Redis } from 'ioredis';

const [command, name] = process.argv.slice(2);
const admin = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function withPg(fn) {
  const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

try {
  if (command === 'check') {
    await withPg((c) => c.query('select 1'));
    const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    await redis.connect();
    await redis.ping();
    redis.disconnect();
    console.log('postgres and redis answer');
  } else if (command === 'create' && /^[a-z0-9_]+$/.test(name ?? '')) {
    await withPg((c) => c.query(`create database ${name}`));
  } else if (command === 'drop' && /^[a-z0-9_]+$/.test(name ?? '')) {
    await withPg((c) => c.query(`drop database if exists ${name} with (force)`));
  } else {
    throw new Error(`usage: services.mjs check | create NAME | drop NAME`);
  }
} catch (err) {
  console.error(`services: ${command} failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
