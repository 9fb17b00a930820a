import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, freshDatabase, usingPostgres, usingRedis, awayFromRateWindowEdge } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';
import { startReceiver, waitUntil } from './support/receiver.ts';

// Three real gateway processes on one Postgres and one Redis: 600 tasks with callbacks, one process
// SIGKILLed mid-way and restarted. Runs where CI runs it: with DATABASE_URL=postgres and REDIS_URL.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

describe.skipIf(!usingPostgres || !usingRedis)(`three processes on Postgres and Redis [${backendName}]`, () => {
  it('600 tasks, one process killed and restarted: all end, callbacks arrive, each charged once, no orphaned lease', async () => {
    const receiver = await startReceiver();
    const database = await freshDatabase();
    const observer = await createTestApp({ WORKERS: '0' }, database);
    cleanups.push(() => receiver.close(), () => database.drop(), () => observer.close());
    const env = {
      ...database.env,
      REDIS_URL: process.env.REDIS_URL!,
      ADMIN_TOKEN,
      SIMULATOR_LATENCY_MS: '200',
      JOB_LEASE_MS: '2000',
      JOB_POLL_MS: '50',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      WEBHOOK_RETRY_DELAYS: '0.5,1,1',
      PUBLIC_BASE_URL: 'http://gateway.test',
      DB_POOL_SIZE: '5',
    };
    const processes: GatewayProcess[] = await Promise.all([startGateway(env), startGateway(env), startGateway(env)]);
    const user = await call('POST', `${processes[0]!.url}/admin/users`, adminHeaders, { name: 'cluster', balance: 100 });
    const key = await call('POST', `${processes[0]!.url}/admin/keys`, adminHeaders, { user_id: user.body.id, unlimited: true, rate_limit_rpm: 1_000_000 });
    const auth = { authorization: `Bearer ${key.body.key}` };

    const receipts: string[] = [];
    let killedPid = 0;
    for (let batch = 0; batch < 20; batch++) {
      if (batch === 8) {
        killedPid = processes[1]!.child.pid!;
        await processes[1]!.stop('SIGKILL');
      }
      if (batch === 12) processes[1] = await startGateway(env);
      const live = batch >= 8 && batch < 12 ? [processes[0]!, processes[2]!] : processes;
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call('POST', `${live[i % live.length]!.url}/v1/images/generations`, auth, { model: 'imggen-2', prompt: `cluster ${batch}-${i}`, webhook: receiver.url }).catch(() => undefined),
        ),
      );
      for (const r of results) if (r?.status === 200) receipts.push(r.body.data[0].task_id);
    }
    expect(receipts.length).toBe(600);

    const open = () => observer.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.body.id).where('status', 'in', ['submitted', 'processing']).execute();
    await waitUntil('every task to end', async () => (await open()).length === 0, 120_000);
    const tasks = await observer.ctx.db.selectFrom('tasks').selectAll().where('user_id', '=', user.body.id).execute();
    expect(tasks.length).toBe(600);
    expect(tasks.every((t) => t.status === 'completed')).toBe(true);

    const called = () => new Set(receiver.received.map((r) => JSON.parse(r.body).id));
    await waitUntil('every callback', () => tasks.every((t) => called().has(t.id)), 60_000);

    for (const task of tasks) {
      const rows = await observer.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', task.id).execute();
      expect(rows.filter((r) => r.kind === 'hold')).toHaveLength(1);
      expect(-rows.reduce((sum, r) => sum + Number(r.balance_delta), 0)).toBe(Number(task.cost));
    }
    expect(await auditLedger(observer.ctx.db)).toEqual([]);
    const orphaned = await observer.ctx.db.selectFrom('jobs').select('id').where('lease_owner', 'like', `%:${killedPid}:%`).execute();
    expect(orphaned).toEqual([]);
  }, 240_000);

  it('one per-key rate limit across the three, and a key deleted in one refused by the others within a second', async () => {
    const database = await freshDatabase();
    cleanups.push(() => database.drop());
    // READ_RATE_LIMIT_RPM 1: the key's balance reads are limited by its own rate_limit_rpm (auth.ts).
    const env = { ...database.env, REDIS_URL: process.env.REDIS_URL!, ADMIN_TOKEN, WORKERS: '0', READ_RATE_LIMIT_RPM: '1' };
    const trio = await Promise.all([startGateway(env), startGateway(env), startGateway(env)]);
    const user = await call('POST', `${trio[0]!.url}/admin/users`, adminHeaders, { name: 'trio', balance: 1 });
    const limited = await call('POST', `${trio[0]!.url}/admin/keys`, adminHeaders, { user_id: user.body.id, unlimited: true, rate_limit_rpm: 9 });
    const auth = { authorization: `Bearer ${limited.body.key}` };
    await awayFromRateWindowEdge(20_000);
    const codes: number[] = [];
    for (let i = 0; i < 9; i++) codes.push((await call('GET', `${trio[i % 3]!.url}/v1/user/balance`, auth)).status);
    expect(codes.every((c) => c === 200)).toBe(true);
    for (const gateway of trio) expect((await call('GET', `${gateway.url}/v1/user/balance`, auth)).status).toBe(429);

    const doomed = await call('POST', `${trio[0]!.url}/admin/keys`, adminHeaders, { user_id: user.body.id, unlimited: true });
    const doomedAuth = { authorization: `Bearer ${doomed.body.key}` };
    for (const gateway of trio) expect((await call('GET', `${gateway.url}/v1/user/balance`, doomedAuth)).status).toBe(200);
    await call('DELETE', `${trio[0]!.url}/admin/keys/${doomed.body.id}`, adminHeaders);
    const deletedAt = Date.now();
    for (const gateway of trio.slice(1)) {
      await waitUntil('the refusal', async () => (await call('GET', `${gateway.url}/v1/user/balance`, doomedAuth)).status === 401, 3000);
    }
    expect(Date.now() - deletedAt).toBeLessThan(1000);
  }, 60_000);
});
