import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, freshDatabase, usingPostgres, usingRedis, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

// A real gateway process whose Postgres (and Redis) connections go through a TCP hop the test can
// cut, and whose Postgres backends the test terminates: the process must live through both, answer
// 503 quickly while a store is away, and serve again by itself once it is back.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function call(gateway: GatewayProcess, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) {
  const started = Date.now();
  const res = await request(`${gateway.url}${path}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    headersTimeout: 20_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - started;
}

function alive(gateway: GatewayProcess) {
  expect(gateway.child.exitCode, gateway.output()).toBeNull();
  expect(gateway.child.signalCode, gateway.output()).toBeNull();
}

async function account(gateway: GatewayProcess) {
  const user = await call(gateway, 'POST', '/admin/users', adminHeaders, { name: 'outage', balance: 50 });
  const key = await call(gateway, 'POST', '/admin/keys', adminHeaders, { user_id: user.body.id, unlimited: true });
  return { userId: user.body.id as string, auth: { authorization: `Bearer ${key.body.key}` } };
}

/** Submits image tasks until stopped; remembers every task the gateway accepted. */
function submitLoop(gateway: GatewayProcess, auth: Record<string, string>) {
  const accepted: string[] = [];
  const statuses = new Set<number>();
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const res = await call(gateway, 'POST', '/v1/images/generations', auth, { model: 'imggen-2', prompt: `outage ${i}` }).catch(() => undefined);
      if (res) statuses.add(res.status);
      if (res?.status === 200) accepted.push(res.body.data[0].task_id);
      const balance = await call(gateway, 'GET', '/v1/balance', auth).catch(() => undefined);
      if (balance) statuses.add(balance.status);
    }
  })();
  return { accepted, statuses, stop: async () => ((running = false), await done) };
}

/** Every accepted task ends, each charged once, and the ledger balances: nothing lost or doubled. */
async function expectEveryTaskSettledOnce(inspector: TestApp, ids: string[]) {
  await until('every accepted task to end', async () => {
    const open = await inspector.ctx.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', 'in', ['submitted', 'processing']).execute();
    return open.length === 0;
  }, 60_000);
  const tasks = await inspector.ctx.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
  expect(tasks).toHaveLength(ids.length);
  for (const task of tasks) {
    const rows = await inspector.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', task.id).execute();
    expect(rows.filter((r) => r.kind === 'hold')).toHaveLength(1);
    expect(-rows.reduce((sum, r) => sum + Number(r.balance_delta), 0)).toBe(task.status === 'completed' ? task.cost : 0);
  }
  expect(await auditLedger(inspector.ctx.db)).toEqual([]);
}

describe.runIf(usingPostgres)(`Postgres goes away and comes back [${backendName}]`, () => {
  it('terminated backends, then a cut connection: no crash, quick 503s and not ready, then service by itself', async () => {
    const database = await freshDatabase();
    const inspector = await createTestApp({ WORKERS: '0' }, database);
    cleanups.push(() => inspector.close());
    const target = new URL(process.env.DATABASE_URL!);
    const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    cleanups.push(() => proxy.close());
    const appName = `gw_outage_${randomBytes(4).toString('hex')}`;
    const viaProxy = new URL(database.env.DATABASE_URL);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    viaProxy.searchParams.set('application_name', appName);
    const gateway = await startGateway({
      DATABASE_URL: viaProxy.toString(),
      ADMIN_TOKEN,
      WORKERS: '4',
      SIMULATOR_LATENCY_MS: '100',
      JOB_POLL_MS: '20',
      JOB_LEASE_MS: '3000',
      DB_CONNECT_TIMEOUT_MS: '1000',
      // The load loop meets 503s in about a millisecond while the database is cut, thousands a
      // minute: under the default per-key limit the probe after the outage would meet 429s.
      RATE_LIMIT_RPM: '10000000',
      // Redis stays out of this one: its own test below.
      REDIS_URL: '',
    });
    const { auth } = await account(gateway);
    const load = submitLoop(gateway, auth);

    // 1. Every backend of the gateway killed, three times, while it serves.
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    cleanups.push(() => admin.end());
    for (let round = 0; round < 3; round++) {
      await new Promise((r) => setTimeout(r, 400));
      const killed = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [appName]);
      expect(killed.rowCount).toBeGreaterThan(0);
    }
    await new Promise((r) => setTimeout(r, 300));
    alive(gateway);
    await until('balance reads to succeed again', async () => (await call(gateway, 'GET', '/v1/balance', auth)).status === 200, 5000);

    // 2. Postgres unreachable: refused quickly with 503, not ready, still alive. (A balance the
    // process holds a fresh snapshot of may still be read; anything that needs the database is 503.)
    const { auth: uncachedKey } = await account(gateway);
    await proxy.cut();
    const needDatabase: [string, string, Record<string, string>, unknown?][] = [
      ['POST', '/v1/images/generations', auth, { model: 'imggen-2', prompt: 'while down' }],
      ['GET', '/v1/balance', uncachedKey],
      ['POST', '/admin/users', adminHeaders, { name: 'while down', balance: 1 }],
    ];
    for (const [method, path, headers, body] of needDatabase) {
      const res = await call(gateway, method as 'GET' | 'POST', path, headers, body);
      expect(res.status, path).toBe(503);
      expect(res.body).toEqual({ error: { code: 503, message: expect.any(String), type: 'service_unavailable' } });
      expect(res.ms).toBeLessThan(5000);
    }
    expect([200, 503]).toContain((await call(gateway, 'GET', '/v1/user/balance', auth)).status);
    expect((await call(gateway, 'GET', '/readyz')).status).toBe(503);
    expect((await call(gateway, 'GET', '/healthz')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500)); // workers and sweepers keep failing meanwhile
    alive(gateway);

    // 3. Back: ready and serving within seconds, with no restart.
    await proxy.restore();
    await until('ready again', async () => (await call(gateway, 'GET', '/readyz')).status === 200, 10_000);
    await until('submits to succeed again', async () => (await call(gateway, 'POST', '/v1/images/generations', auth, { model: 'imggen-2', prompt: 'after' })).status === 200, 10_000);
    await load.stop();
    alive(gateway);
    expect(load.statuses.has(500)).toBe(false);
    expect(load.accepted.length).toBeGreaterThan(0);
    await expectEveryTaskSettledOnce(inspector, load.accepted);
  }, 120_000);
});

describe.runIf(usingRedis)(`Redis goes away and comes back [${backendName}]`, () => {
  // Redis carries the shared rate limits and cache invalidations: while it is away each process
  // limits on its own and keyed calls go on; readiness says Redis is missing.
  it('a cut Redis connection: no crash, no waiting on Redis, not ready, then shared again by itself', async () => {
    const database = await freshDatabase();
    const target = new URL(process.env.REDIS_URL!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    cleanups.push(() => proxy.close());
    const gateway = await startGateway({ ...database.env, ADMIN_TOKEN, WORKERS: '0', REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    const { auth } = await account(gateway);
    expect((await call(gateway, 'GET', '/v1/balance', auth)).status).toBe(200);

    await proxy.cut();
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 5; i++) {
      const res = await call(gateway, 'GET', '/v1/balance', auth);
      expect(res.status).toBe(200);
      expect(res.ms).toBeLessThan(1000);
    }
    expect((await call(gateway, 'GET', '/readyz')).status).toBe(503);
    alive(gateway);

    await proxy.restore();
    await until('ready again', async () => (await call(gateway, 'GET', '/readyz')).status === 200, 15_000);
    await until('keyed calls to succeed again', async () => (await call(gateway, 'GET', '/v1/balance', auth)).status === 200, 5000);
    alive(gateway);
  }, 60_000);
});
