import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { createContext, type AppContext } from '../src/context.ts';
import type { Dialect } from '../src/db/index.ts';
import * as accounts from '../src/modules/accounts/accounts.service.ts';
import { ensureSimulatorChannel } from '../src/modules/channels/channels.service.ts';
import { allModelIds } from '../src/core/catalog/models.ts';
import { startWorkers } from '../src/modules/tasks/engine.ts';
import type { TextFloats } from '../src/modules/text-money/floats.ts';
import { TextMoneyBook } from '../src/modules/text-money/text-money.ts';

// Every suite runs on the backend that DATABASE_URL / REDIS_URL name: a temp SQLite file and the
// in-process limiter by default, a fresh Postgres schema and the shared Redis when set (as CI does).

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const usingPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
export const usingRedis = Boolean(process.env.REDIS_URL);
export const backendName = `${usingPostgres ? 'postgres' : 'sqlite'}+${usingRedis ? 'redis' : 'memory'}`;

export interface TestDatabase {
  url: string;
  schema?: string;
  /** Environment for a child process that must use the same database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A database of its own: a temp SQLite file, or a fresh schema in the Postgres of DATABASE_URL. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!usingPostgres) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-test-'));
    const url = `sqlite:${path.join(dir, 'gateway.db')}`;
    const REDIS_PREFIX = `gw:${path.basename(dir)}:`;
    return { url, env: { DATABASE_URL: url, REDIS_PREFIX }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const url = process.env.DATABASE_URL!;
  // Named after the run: test/postgres-schemas.ts drops the run's schemas when every file is done.
  const schema = `t_${process.env.TEST_SCHEMA_RUN ?? 'adhoc'}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const separator = url.includes('?') ? '&' : '?';
  const childUrl = `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    url,
    schema,
    // Test files share one Redis: each database gets its own keys (rate limits) and channels.
    env: { DATABASE_URL: childUrl, REDIS_PREFIX: `gw:${schema}:` },
    // Not dropped here: another file's migration may be looking at every schema at this moment.
    async drop() {},
  };
}

const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-files-'));

export function testConfig(database: TestDatabase, env: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({
    FILES_DIR: filesDir,
    SIMULATOR_LATENCY_MS: '50',
    JOB_POLL_MS: '20',
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL,
    REDIS_PREFIX: database.env.REDIS_PREFIX ?? 'gw:',
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    GATEWAY_DEMO: '0',
    ...env,
  });
}

/**
 * The app's context with text money's inside in reach: tests write its ops through its group commit
 * and close its floats, which the app itself only reaches through ctx.textMoney's interface. Tests
 * also read the dialect there (the app reads ctx.db.dialect).
 */
export type TestContext = AppContext & { textMoney: TextMoneyBook; textFloats: TextFloats; dialect: Dialect };

function withTextMoneyInside(ctx: AppContext): TestContext {
  const money = ctx.textMoney;
  if (!(money instanceof TextMoneyBook)) throw new Error('ctx.textMoney is not a TextMoneyBook');
  return Object.assign(ctx, { textMoney: money, textFloats: money.floats, dialect: ctx.db.dialect });
}

export interface TestApp {
  app: FastifyInstance;
  ctx: TestContext;
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Seed the simulator channel and run job workers in this process, as `npm start` does. */
  workers?: boolean;
  /** The app's logger (silent by default): a test that checks what an operator would read passes its own. */
  logger?: pino.Logger;
}

export async function createTestApp(env: Record<string, string> = {}, database?: TestDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  const db = database ?? (await freshDatabase());
  const config = testConfig(db, env);
  const ctx = withTextMoneyInside(await createContext(config, { logger: options.logger ?? pino({ level: 'silent' }), db: { schema: db.schema } }));
  await ensureSimulatorChannel(ctx.db, allModelIds());
  const workers = options.workers ? startWorkers(ctx) : undefined;
  // As in a process with workers (src/main.ts): the sweeper of lost text holds runs too.
  if (workers) ctx.textMoney.start();
  const app = await buildApp(ctx);
  return {
    app,
    ctx,
    database: db,
    async close() {
      await workers?.stop(2000);
      await app.close();
      await ctx.close();
      if (!database) await db.drop();
    },
  };
}

export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** An account with `balance` (USD) and one key; `key` options as POST /admin/keys takes them. */
export async function seedAccount(
  ctx: AppContext,
  balance: number,
  key: { quota?: number; unlimited?: boolean; rate_limit_rpm?: number } = { unlimited: true },
) {
  const user = await accounts.createUser(ctx, { name: `user-${randomBytes(3).toString('hex')}`, balance });
  const created = await accounts.createKey(ctx, { user_id: user.id, ...key });
  return { user, keyId: created.id, key: created.key, auth: { authorization: `Bearer ${created.key}` } };
}

/**
 * Rate limits count in fixed one-minute windows on the wall clock: a test that expects the Nth
 * request of a burst to be refused must not straddle a window's end. Waits for the next window when
 * fewer than `needMs` remain in this one.
 */
export async function awayFromRateWindowEdge(needMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
