import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { getTask } from '../src/modules/tasks/tasks.repo.ts';
import { endTask, submitTask } from '../src/modules/tasks/tasks.service.ts';
import { claim } from '../src/jobs/jobs.repo.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

async function keyOf(account: Awaited<ReturnType<typeof seedAccount>>) {
  return (await t.ctx.keyCache.lookup((await t.ctx.db.selectFrom('api_keys').select('key_hash').where('id', '=', account.keyId).executeTakeFirstOrThrow()).key_hash))!;
}

describe(`task endings and money [${backendName}]`, () => {
  it('holds the quote at submit and writes the task with its dispatch job in one transaction', async () => {
    const account = await seedAccount(t.ctx, 1);
    const task = await submitTask(t.ctx.db, { key: await keyOf(account), kind: 'image', model: 'imggen-2', params: {}, holdUnits: 300_000, deadlineMs: 60_000 });
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 700_000, used: 300_000 });
    const jobs = await t.ctx.db.selectFrom('jobs').selectAll().where('task_id', '=', task.id).execute();
    expect(jobs.map((j) => j.kind)).toEqual(['dispatch']);
  });

  it('a refused hold writes neither task nor job (402)', async () => {
    const account = await seedAccount(t.ctx, 0.1);
    const key = await keyOf(account);
    await expect(submitTask(t.ctx.db, { key, kind: 'image', model: 'imggen-2', params: {}, holdUnits: 200_000, deadlineMs: 60_000 })).rejects.toMatchObject({ status: 402 });
    const tasks = await t.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', account.user.id).execute();
    expect(tasks).toEqual([]);
  });

  it('racing endings settle a task exactly once (compare-and-set on its status)', async () => {
    const account = await seedAccount(t.ctx, 1);
    const key = await keyOf(account);
    const task = await submitTask(t.ctx.db, { key, kind: 'image', model: 'imggen-2', params: {}, holdUnits: 400_000, deadlineMs: 60_000 });
    const endings = await Promise.all([
      endTask(t.ctx.db, task, { state: 'failed', code: 'timeout', message: 'late' }, t.ctx.pricing),
      endTask(t.ctx.db, task, { state: 'completed', result: { images: [] } }, t.ctx.pricing),
      endTask(t.ctx.db, task, { state: 'failed', code: 'upstream_error', message: 'x' }, t.ctx.pricing),
      endTask(t.ctx.db, task, { state: 'completed', result: { images: [] } }, t.ctx.pricing),
    ]);
    expect(endings.filter(Boolean)).toHaveLength(1);
    const ended = (await getTask(t.ctx.db, task.id))!;
    const user = (await getUser(t.ctx.db, account.user.id))!;
    // Either it completed (charged the hold) or failed (refunded in full) — never both, never twice.
    if (ended.status === 'completed') expect(user).toMatchObject({ balance: 600_000, used: 400_000 });
    else expect(user).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('two claimers never lease the same job', async () => {
    const account = await seedAccount(t.ctx, 10);
    const key = await keyOf(account);
    for (let i = 0; i < 20; i++) await submitTask(t.ctx.db, { key, kind: 'image', model: 'imggen-2', params: {}, holdUnits: 1, deadlineMs: 60_000 });
    const [a, b] = await Promise.all([claim(t.ctx.db, t.ctx.dialect, 'a', 50, 30_000), claim(t.ctx.db, t.ctx.dialect, 'b', 50, 30_000)]);
    const ids = [...a, ...b].map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Leased jobs are not claimable again until their lease runs out.
    expect(await claim(t.ctx.db, t.ctx.dialect, 'c', 50, 30_000)).toEqual([]);
  });
});
