import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_MS } from '../src/lib/rate-limiter.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, freshDatabase, usingRedis, type TestDatabase } from './harness.ts';
import { ROOT, startGateway, stopAllGateways, type GatewayProcess } from './helpers/gateway-process.ts';

// Two real gateway processes on one database (a temp SQLite file both open, or one fresh Postgres
// schema) and, when REDIS_URL is set, one Redis. With REDIS_URL set, an unreachable Redis makes the
// processes fail to start, so these tests fail rather than skip (CI sets REDIS_URL on purpose).
//
// A key deleted anywhere must be refused everywhere within a second: through the Redis announcement
// when there is Redis, through the poll of api_keys.updated_at (KEY_CACHE_POLL_MS, default 500 ms)
// when there is not. The "without Redis" pair runs on every backend, so the poll path is proven on
// Postgres too; the "with Redis" pair runs whenever REDIS_URL is set.

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await stopAllGateways();
  await database?.drop();
});

type Pair = [GatewayProcess, GatewayProcess];

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An account with one key, made through the admin API of `gateway`. */
async function newKey(gateway: GatewayProcess, key: { rate_limit_rpm?: number } = {}) {
  const user = await gateway.call('POST', '/admin/users', adminHeaders, { name: 'multiprocess', balance: 5 });
  expect(user.status).toBe(201);
  const created = await gateway.call('POST', '/admin/keys', adminHeaders, { user_id: user.body.id, unlimited: true, ...key });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, key: created.body.key as string, auth: bearer(created.body.key) };
}

/** `node bin/gateway.js ...` against the shared database; resolves with the exit code and parsed stdout. */
function cli(redisUrl: string | undefined, ...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env, ...database.env, LOG_LEVEL: 'silent', REDIS_URL: redisUrl };
  if (redisUrl === undefined) delete env.REDIS_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/gateway.js', ...args], { cwd: ROOT, env }, (err, stdout, stderr) => {
      let json: any;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, json, stderr });
    });
  });
}

/**
 * Polls `gateway` every 50 ms after a deletion at `since`, on both balance routes, until both refuse
 * the key (or 3 s pass). Times are milliseconds after `since`:
 *  - `user`: when /v1/user/balance first answered 401 (the key guard refuses the deleted key);
 *  - `own`: when /v1/balance first answered 200 `{success:false}` (SPEC 4.1 for a deleted key);
 *  - `ownAcceptedUntil`: when the last request that /v1/balance still answered `success:true` was
 *    sent (-1 if none was).
 */
async function refusalTimes(gateway: GatewayProcess, key: string, since: number) {
  let user = Infinity;
  let own = Infinity;
  let ownAcceptedUntil = -1;
  while (Date.now() - since < 3000 && (user === Infinity || own === Infinity)) {
    if (user === Infinity) {
      const res = await gateway.call('GET', '/v1/user/balance', bearer(key));
      if (res.status === 401) {
        user = Date.now() - since;
        expect(res.body.error).toMatchObject({ code: 401, type: 'authentication_error' });
      } else expect(res.status).toBe(200);
    }
    if (own === Infinity) {
      const sent = Date.now() - since;
      const res = await gateway.call('GET', '/v1/balance', bearer(key));
      expect(res.status).toBe(200);
      if (res.body.success === false) {
        own = Date.now() - since;
        expect(res.body).toEqual({ success: false, message: expect.stringMatching(/deleted/i) });
      } else ownAcceptedUntil = sent;
    }
    await sleep(50);
  }
  return { user, own, ownAcceptedUntil };
}

/**
 * "Refused within one second": 401 on /v1/user/balance is seen in < 1000 ms. /v1/balance reads the
 * key's balance snapshot, which may be up to 1 s old; so for it, no request sent 1000 ms or more
 * after the deletion may still be answered `success:true`, and the refusal must come (a poll every
 * 50 ms cannot time that edge more finely than 50 ms).
 */
function expectRefusedWithinASecond(times: Awaited<ReturnType<typeof refusalTimes>>) {
  expect(times.user, 'ms until /v1/user/balance answered 401').toBeLessThan(1000);
  expect(times.ownAcceptedUntil, 'last ms at which /v1/balance still said success:true').toBeLessThan(1000);
  expect(times.own, 'ms until /v1/balance answered success:false').toBeLessThan(3000);
}

/** Both balance routes accept the key (this also puts it in the process's key cache). */
async function expectAccepted(gateway: GatewayProcess, key: string) {
  expect((await gateway.call('GET', '/v1/user/balance', bearer(key))).status).toBe(200);
  expect((await gateway.call('GET', '/v1/balance', bearer(key))).body).toMatchObject({ success: true });
}

/** Rate-limit windows are fixed minutes: do not start a count just before one ends. */
async function awayFromWindowEdge(marginMs = 5000) {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < marginMs) await sleep(left + 50);
}

/** Starts two processes on the shared database, with `redis` as their REDIS_URL (undefined: none). */
function twoProcesses(redis: string | undefined): () => Pair {
  let pair: Pair | undefined;
  beforeAll(async () => {
    const env = { ...database.env, ADMIN_TOKEN, REDIS_URL: redis, WORKERS: '0', LOG_LEVEL: 'warn' };
    pair = (await Promise.all([startGateway({ env }), startGateway({ env })])) as Pair;
  }, 60_000);
  afterAll(async () => {
    await Promise.all((pair ?? []).map((gateway) => gateway.stop('SIGKILL')));
  });
  return () => pair!;
}

/** The deletion cases, for a pair of processes started by `twoProcesses(redis)`. */
function deletionCases(processes: () => Pair, redis: string | undefined) {
  it('a key deleted through one process (admin API) is refused by the other within one second', async () => {
    const pair = processes();
    const { id, key } = await newKey(pair[0]);
    await expectAccepted(pair[1], key); // warm the other process's key cache
    await expectAccepted(pair[0], key);
    const deleted = await pair[0].call('DELETE', `/admin/keys/${id}`, adminHeaders);
    expect(deleted).toMatchObject({ status: 200, body: { id, deleted: true } });
    const since = Date.now();
    // The deleting process refuses it at once.
    expect((await pair[0].call('GET', '/v1/user/balance', bearer(key))).status).toBe(401);
    expectRefusedWithinASecond(await refusalTimes(pair[1], key, since));
  });

  it('a key deleted from the command line is refused by both processes within one second', async () => {
    const pair = processes();
    const { id, key } = await newKey(pair[1]);
    await expectAccepted(pair[0], key);
    await expectAccepted(pair[1], key);
    const deleted = await cli(redis, 'keys', 'delete', id);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ id, deleted: true });
    const since = Date.now();
    for (const times of await Promise.all(pair.map((gateway) => refusalTimes(gateway, key, since)))) expectRefusedWithinASecond(times);
  });
}

describe(`two gateway processes on one database, without Redis: the key cache polls api_keys.updated_at [${backendName}]`, () => {
  // REDIS_URL removed from the children's environment, even when the suite has one.
  const processes = twoProcesses(undefined);
  deletionCases(processes, undefined);
});

describe(`two gateway processes on one database and one Redis [${backendName}]`, () => {
  const redis = process.env.REDIS_URL;
  const processes = usingRedis ? twoProcesses(redis) : () => undefined as unknown as Pair;

  it.skipIf(!usingRedis)('one per-key rate limit is enforced across both processes', async () => {
    const pair = processes();
    const limit = 6;
    const { auth } = await newKey(pair[0], { rate_limit_rpm: limit });
    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i < limit; i++) statuses.push((await pair[i % 2]!.call('GET', '/v1/user/balance', auth)).status);
    expect(statuses).toEqual(Array(limit).fill(200));
    // The next request is refused whichever process gets it.
    for (const gateway of pair) {
      const limited = await gateway.call('GET', '/v1/user/balance', auth);
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatchObject({ code: 429, type: 'rate_limit_error' });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    }
  });

  if (usingRedis) deletionCases(processes, redis);
});
