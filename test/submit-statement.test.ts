import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { applyMany, InsufficientFunds, type LedgerOp } from '../src/modules/billing/ledger.ts';
import { newTask } from '../src/modules/tasks/tasks.service.ts';
import { submitStatementFor, TASK_COLUMNS } from '../src/modules/tasks/submit-statement.ts';
import type { Task } from '../src/db/types.ts';
import { backendName, createTestApp, seedAccount, usingPostgres, type TestApp } from './harness.ts';

// Group-committed submits: on Postgres a batch is first tried as one statement (all or nothing),
// then item by item. Either way each submit must end exactly as if it had been written alone.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

type Account = Awaited<ReturnType<typeof seedAccount>>;
const HOLD = 100_000;

function tasksFor(account: Account, count: number, limited = false): Task[] {
  const key = { id: account.keyId, user_id: account.user.id, unlimited: limited ? 0 : 1 } as Parameters<typeof newTask>[0]['key'];
  return Array.from({ length: count }, () => newTask({ key, kind: 'image', model: 'imggen-2', params: { model: 'imggen-2' }, holdUnits: HOLD, deadlineMs: 60_000 }));
}

async function outcome(promise: Promise<void>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    if (err instanceof InsufficientFunds) return err.payer;
    throw err;
  }
}

const countTasks = async (userId: string) =>
  Number((await t.ctx.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

describe(`group-committed submits [${backendName}]`, () => {
  it('a batch mixing payers, short accounts and short keys ends exactly as one submit at a time would', async () => {
    const rich = await seedAccount(t.ctx, 1);
    const poor = await seedAccount(t.ctx, 0.3); // pays three of five holds
    const limited = await seedAccount(t.ctx, 10, { quota: 0.2 }); // its key pays two of five
    const batch = [...tasksFor(rich, 5), ...tasksFor(poor, 5), ...tasksFor(limited, 5, true)];
    const results = await Promise.all(batch.map((task) => outcome(t.ctx.submits.submit(task))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(results.slice(5, 10).sort()).toEqual(['account', 'account', 'ok', 'ok', 'ok']);
    expect(results.slice(10).sort()).toEqual(['key', 'key', 'key', 'ok', 'ok']);
    expect(await countTasks(rich.user.id)).toBe(5);
    expect(await countTasks(poor.user.id)).toBe(3);
    expect(await countTasks(limited.user.id)).toBe(2);
    expect((await getUser(t.ctx.db, poor.user.id))!.balance).toBe(0);
    expect((await getKey(t.ctx.db, limited.keyId))!.quota_remain).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});

describe.runIf(usingPostgres)('the one-statement submit path [postgres]', () => {
  it('names every column of the tasks table with its type', async () => {
    const columns = await sql<{ column_name: string; data_type: string }>`
      select column_name, data_type from information_schema.columns
      where table_name = 'tasks' and table_schema = current_schema() order by ordinal_position`.execute(t.ctx.db);
    const pgType = { text: 'text', int: 'integer', bigint: 'bigint' } as const;
    expect(TASK_COLUMNS.map(([name, type]) => [name, pgType[type]])).toEqual(columns.rows.map((c) => [c.column_name, c.data_type]));
  });

  it('writes holds, tasks, dispatch jobs and ledger rows for a whole batch', async () => {
    const a = await seedAccount(t.ctx, 1);
    const b = await seedAccount(t.ctx, 1, { quota: 0.5 });
    const batch = [...tasksFor(a, 3), ...tasksFor(b, 2, true)];
    await submitStatementFor(t.ctx.db)!(batch);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 1_000_000 - 3 * HOLD, used: 3 * HOLD });
    expect(await getKey(t.ctx.db, a.keyId)).toMatchObject({ quota_used: 3 * HOLD });
    expect(await getKey(t.ctx.db, b.keyId)).toMatchObject({ quota_used: 2 * HOLD, quota_remain: 500_000 - 2 * HOLD });
    const jobs = await t.ctx.db.selectFrom('jobs').select(['task_id', 'kind']).where('task_id', 'in', batch.map((task) => task.id)).execute();
    expect(jobs.map((j) => j.kind)).toEqual(Array(5).fill('dispatch'));
    const written = await t.ctx.db.selectFrom('tasks').selectAll().where('id', 'in', batch.map((task) => task.id)).orderBy('id').execute();
    expect(written).toEqual([...batch].sort((x, y) => (x.id < y.id ? -1 : 1)));
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('writes nothing at all when one payer of the batch cannot pay', async () => {
    const rich = await seedAccount(t.ctx, 1);
    const poor = await seedAccount(t.ctx, 0.15);
    const shortKey = await seedAccount(t.ctx, 1, { quota: 0.15 });
    for (const batch of [[...tasksFor(rich, 2), ...tasksFor(poor, 2)], [...tasksFor(rich, 2), ...tasksFor(shortKey, 2, true)]]) {
      await expect(submitStatementFor(t.ctx.db)!(batch)).rejects.toThrow(/missing or short/);
    }
    expect(await countTasks(rich.user.id)).toBe(0);
    expect(await getUser(t.ctx.db, rich.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await getUser(t.ctx.db, poor.user.id)).toMatchObject({ balance: 150_000, used: 0 });
    expect(await getKey(t.ctx.db, shortKey.keyId)).toMatchObject({ quota_remain: 150_000, quota_used: 0 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("locks rows in the careful path's order: the two paths running together never deadlock", async () => {
    const [a, b] = [await seedAccount(t.ctx, 100, { quota: 50 }), await seedAccount(t.ctx, 100, { quota: 50 })];
    const careful = (first: Account, second: Account): LedgerOp[] =>
      [second, first].map((x) => ({ op: 'debit', kind: 'hold', movement: { userId: x.user.id, keyId: x.keyId, keyLimited: true, amount: HOLD, ref: 'careful' } }));
    for (let round = 0; round < 20; round++) {
      await Promise.all([
        submitStatementFor(t.ctx.db)!([...tasksFor(b, 2, true), ...tasksFor(a, 2, true)]),
        t.ctx.db.transaction().execute((trx) => applyMany(trx, careful(a, b))),
        submitStatementFor(t.ctx.db)!([...tasksFor(a, 1, true), ...tasksFor(b, 1, true)]),
      ]);
    }
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ used: 20 * 4 * HOLD });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});
