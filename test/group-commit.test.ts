import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { GroupCommit, WholeBatchRefused } from '../src/db/group-commit.ts';
import { createDb } from '../src/db/index.ts';
import { NotConnected } from '../src/db/errors.ts';
import { backendName, createTestApp, usingPostgres, type TestApp } from './harness.ts';
import { startTcpProxy } from './support/tcp-proxy.ts';

// The careful path may write a batch only when the whole-batch write certainly kept nothing;
// otherwise (a connection lost while the statement may have committed) a fallback could write it twice.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

function batcher(whole: (items: number[]) => Promise<void>) {
  const carefulBatches: number[][] = [];
  const commit = new GroupCommit<number>(t.ctx.db, 1, async (_trx, items) => (carefulBatches.push(items), items.map(() => undefined)), () => {}, whole);
  return { commit, carefulBatches };
}

describe(`group commit with a whole-batch write [${backendName}]`, () => {
  it('a refused whole batch is written item by item by the careful path', async () => {
    const { commit, carefulBatches } = batcher(async () => {
      throw new WholeBatchRefused(new Error('new row violates check constraint'));
    });
    await Promise.all([commit.add(1), commit.add(2), commit.add(3)]);
    expect(carefulBatches.flat().sort()).toEqual([1, 2, 3]);
  });

  it('any other failure fails the batch and never reaches the careful path (it may have been written)', async () => {
    const { commit, carefulBatches } = batcher(async () => {
      throw new Error('Connection terminated unexpectedly');
    });
    const outcomes = await Promise.allSettled([commit.add(1), commit.add(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(carefulBatches).toEqual([]);
  });

  it('a written whole batch resolves every item without the careful path', async () => {
    const written: number[] = [];
    const { commit, carefulBatches } = batcher(async (items) => void written.push(...items));
    await Promise.all([commit.add(1), commit.add(2)]);
    expect(written.sort()).toEqual([1, 2]);
    expect(carefulBatches).toEqual([]);
  });
});

describe(`group commit: items nobody waits on [${backendName}]`, () => {
  function recorder() {
    const batches: number[][] = [];
    const commit = new GroupCommit<number>(t.ctx.db, 1, async () => [], () => {}, async (items) => void batches.push([...items]));
    return { commit, batches };
  }

  it('an item added soon rides with the next batch (one commit for a settlement and the next hold)', async () => {
    const { commit, batches } = recorder();
    const settlement = commit.addSoon(1);
    await commit.add(2);
    await settlement;
    expect(batches).toEqual([[1, 2]]);
  });

  it('an item added soon is written alone when nothing else comes', async () => {
    const { commit, batches } = recorder();
    await commit.addSoon(1);
    expect(batches).toEqual([[1]]);
  });

  it('flush writes what is queued and resolves after its commit', async () => {
    const { commit, batches } = recorder();
    void commit.addSoon(1);
    void commit.addSoon(2);
    expect(batches).toEqual([]);
    await commit.flush();
    expect(batches).toEqual([[1, 2]]);
    await commit.flush();
    expect(batches).toEqual([[1, 2]]);
  });

  it('a queued item (no promise) calls back once after its commit, and flush waits for it', async () => {
    const { commit, batches } = recorder();
    const calls: unknown[][] = [];
    commit.queue(1, 50, (...args) => calls.push(args));
    commit.queue(2, 50, (...args) => calls.push(args));
    await commit.flush();
    expect(batches).toEqual([[1, 2]]);
    expect(calls).toEqual([[undefined], [undefined]]);
  });

  it('a queued callback that throws does not keep the rest of its batch from being told', async () => {
    const { commit, batches } = recorder();
    const told: number[] = [];
    commit.queue(1, 50, () => {
      throw new Error('a caller bug');
    });
    commit.queue(2, 50, () => told.push(2));
    await commit.flush();
    expect(batches).toEqual([[1, 2]]);
    expect(told).toEqual([2]);
  });

  it('a queued item that cannot be written calls back with the reason', async () => {
    const refused = new Error('Connection terminated unexpectedly');
    const commit = new GroupCommit<number>(t.ctx.db, 1, async () => [], () => {}, async () => {
      throw refused;
    });
    const reasons: unknown[] = [];
    commit.queue(1, 1, (error) => reasons.push(error));
    await commit.flush();
    expect(reasons).toEqual([refused]);
  });
});

describe(`group commit: a batch that never reached the database [${backendName}]`, () => {
  it('waiting callers are failed at once; items nobody waits on are written once it answers again', async () => {
    let down = 2;
    const written: number[] = [];
    const commit = new GroupCommit<number>(t.ctx.db, 1, async () => [], () => {}, async (items) => {
      if (down-- > 0) throw new NotConnected(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      written.push(...items);
    });
    const told: unknown[] = [];
    commit.queue(1, 1, (error) => told.push(error ?? 'written'));
    await expect(commit.add(2)).rejects.toBeInstanceOf(NotConnected);
    await until(() => told.length === 1);
    expect(told).toEqual(['written']);
    expect(written).toEqual([1]);
  });
});

describe.runIf(usingPostgres)('group commit through a cut connection [postgres]', () => {
  it('a settlement queued while Postgres is unreachable is committed exactly once after it returns', async () => {
    const target = new URL(process.env.DATABASE_URL!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(process.env.DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const store = createDb(url.toString(), { schema: t.database.schema, connectTimeoutMs: 500 });
    try {
      await sql`create table gc_probe (n integer primary key)`.execute(store.db);
      const commit = new GroupCommit<number>(store.db, 1, async (trx, items) => {
        for (const n of items) await sql`insert into gc_probe (n) values (${n})`.execute(trx);
        return items.map(() => undefined);
      });
      await proxy.cut();
      const told: unknown[] = [];
      commit.queue(1, 1, (error) => told.push(error ?? 'written'));
      await expect(commit.add(2)).rejects.toBeInstanceOf(NotConnected);
      await new Promise((r) => setTimeout(r, 800));
      expect(told).toEqual([]);
      await proxy.restore();
      await until(() => told.length === 1, 10_000);
      expect(told).toEqual(['written']);
      const { rows } = await sql<{ n: number }>`select n from gc_probe order by n`.execute(store.db);
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await store.close();
      await proxy.close();
    }
  }, 30_000);
});

async function until(done: () => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
