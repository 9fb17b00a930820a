import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminHeaders, backendName, freshDatabase, usingRedis, type TestDatabase } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Two real gateway processes on one database (and one Redis when REDIS_URL is set).

let database: TestDatabase;
let one: GatewayProcess;
let two: GatewayProcess;

beforeAll(async () => {
  database = await freshDatabase();
  // READ_RATE_LIMIT_RPM 1: a key's balance reads are limited by its own rate_limit_rpm (auth.ts).
  const env = { ...database.env, ADMIN_TOKEN, WORKERS: '0', READ_RATE_LIMIT_RPM: '1', ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) };
  [one, two] = await Promise.all([startGateway(env), startGateway(env)]);
}, 60_000);
afterAll(async () => {
  await stopAllGateways();
  await database?.drop();
});

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
}

async function newKey(rpm?: number) {
  const user = await call('POST', `${one.url}/admin/users`, adminHeaders, { name: 'multi', balance: 1 });
  const key = await call('POST', `${one.url}/admin/keys`, adminHeaders, { user_id: user.body.id, unlimited: true, ...(rpm ? { rate_limit_rpm: rpm } : {}) });
  return { id: key.body.id as string, auth: { authorization: `Bearer ${key.body.key}` } };
}

describe(`two processes [${backendName}]`, () => {
  it.skipIf(!usingRedis)('share one per-key rate limit through Redis', async () => {
    const key = await newKey(6);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await call('GET', `${(i % 2 ? two : one).url}/v1/user/balance`, key.auth)).status);
    expect(codes).toEqual([200, 200, 200, 200, 200, 200]);
    for (const gateway of [one, two]) {
      const limited = await call('GET', `${gateway.url}/v1/user/balance`, key.auth);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('a key deleted through one process is refused by the other within one second', async () => {
    const key = await newKey();
    // Warm the second process's key cache.
    expect((await call('GET', `${two.url}/v1/user/balance`, key.auth)).status).toBe(200);
    expect((await call('DELETE', `${one.url}/admin/keys/${key.id}`, adminHeaders)).status).toBe(200);
    const deletedAt = Date.now();
    let refusedAfter = Infinity;
    while (Date.now() - deletedAt < 3000) {
      const res = await call('GET', `${two.url}/v1/user/balance`, key.auth);
      if (res.status === 401) {
        refusedAfter = Date.now() - deletedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(refusedAfter).toBeLessThan(1000);
    // And the key's own balance route answers as it does for any deleted key (401).
    const own = await call('GET', `${two.url}/v1/balance`, key.auth);
    expect(own).toMatchObject({ status: 200, body: { success: false } });
  });
});
