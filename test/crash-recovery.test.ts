import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`crash recovery [${backendName}]`, () => {
  it('a worker process SIGKILLed mid-flight loses nothing: a second process finishes every task, each charged once', async () => {
    const database = await freshDatabase();
    const api: TestApp = await createTestApp({ WORKERS: '0' }, database);
    cleanups.push(() => database.drop(), () => api.close());
    const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-crash-'));
    const workerEnv = { ...database.env, WORKERS: '8', SIMULATOR_LATENCY_MS: '1500', JOB_LEASE_MS: '2000', JOB_POLL_MS: '20', FILES_DIR: filesDir };

    const account = await seedAccount(api.ctx, 10);
    const first = await startGateway(workerEnv, 'src/cli.ts', ['worker']);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await api.app.inject({
        method: 'POST',
        url: '/v1/images/generations',
        headers: { ...account.auth, 'content-type': 'application/json' },
        payload: { model: 'imggen-2', prompt: `crash test ${i}` },
      });
      expect(res.statusCode).toBe(200);
      ids.push(res.json().data[0].task_id);
    }
    // Kill it while it is busy: some tasks are processing, some still waiting to be dispatched.
    await waitFor('the first worker to start processing', async () => {
      const row = await api.ctx.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'processing').executeTakeFirst();
      return Number(row?.n) >= 8 ? true : undefined;
    });
    expect(await first.stop('SIGKILL')).toBeNull();
    const open = await api.ctx.db.selectFrom('tasks').select('id').where('status', 'in', ['submitted', 'processing']).execute();
    expect(open.length).toBeGreaterThan(0);

    await startGateway(workerEnv, 'src/cli.ts', ['worker']);
    await waitFor('every task to end', async () => {
      const left = await api.ctx.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', 'in', ['submitted', 'processing']).execute();
      return left.length === 0 ? true : undefined;
    });

    const tasks = await api.ctx.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
    expect(tasks.every((t) => t.status === 'completed')).toBe(true);
    for (const task of tasks) {
      const rows = await api.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', task.id).execute();
      expect(rows.filter((r) => r.kind === 'hold')).toHaveLength(1);
      const charged = -rows.reduce((sum, r) => sum + Number(r.balance_delta), 0);
      expect(charged).toBe(task.cost);
    }
    const user = (await getUser(api.ctx.db, account.user.id))!;
    expect(user.used).toBe(tasks.reduce((sum, t) => sum + Number(t.cost), 0));
    expect(await auditLedger(api.ctx.db)).toEqual([]);
    expect(await api.ctx.db.selectFrom('jobs').select('id').where('task_id', 'in', ids).execute()).toEqual([]);
  }, 120_000);
});
