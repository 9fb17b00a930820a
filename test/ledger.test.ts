import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMany, debit, InsufficientFunds, refund, topUp, type LedgerOp } from '../src/modules/billing/ledger.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ DB_POOL_SIZE: '10' });
});
afterAll(() => t.close());

async function tryDebit(userId: string, keyId: string, keyLimited: boolean, amount: number) {
  try {
    await t.ctx.db.transaction().execute((trx) => debit(trx, 'hold', { userId, keyId, keyLimited, amount, ref: 'burst' }));
    return 'ok';
  } catch (err) {
    if (err instanceof InsufficientFunds) return err.payer;
    throw err;
  }
}

describe(`ledger [${backendName}]`, () => {
  it("one batch on one account: the sum is taken at once when it can be paid, one by one when not", async () => {
    const rich = await seedAccount(t.ctx, 1);
    const poor = await seedAccount(t.ctx, 0.3); // 300,000 units: three of five 100,000 holds
    const limited = await seedAccount(t.ctx, 10, { quota: 0.2 }); // the key pays two of five
    const holds = (a: typeof rich, keyLimited = false): LedgerOp[] =>
      Array.from({ length: 5 }, (_, i) => ({ op: 'debit', kind: 'hold', movement: { userId: a.user.id, keyId: a.keyId, keyLimited, amount: 100_000, ref: `h${i}` } }));
    const outcomes = await t.ctx.db.transaction().execute((trx) => applyMany(trx, [...holds(rich), ...holds(poor), ...holds(limited, true)]));
    expect(outcomes.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(outcomes.slice(5, 10).map((o) => o?.payer)).toEqual([undefined, undefined, undefined, 'account', 'account']);
    expect(outcomes.slice(10).map((o) => o?.payer)).toEqual([undefined, undefined, 'key', 'key', 'key']);
    expect((await getUser(t.ctx.db, poor.user.id))!.balance).toBe(0);
    expect((await getUser(t.ctx.db, limited.user.id))!.used).toBe(200_000);
    expect((await getKey(t.ctx.db, limited.keyId))!.quota_remain).toBe(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('batches touching the same accounts in opposite orders do not deadlock (rows are locked in one order)', async () => {
    const accounts = await Promise.all(Array.from({ length: 8 }, () => seedAccount(t.ctx, 100)));
    // Each batch debits and refunds every account, in its own shuffled order, all batches at once:
    // locking in arrival order made Postgres abort some of them as deadlocks.
    const batches = Array.from({ length: 20 }, (_, b) => {
      const ops: LedgerOp[] = accounts.flatMap((a, i) => [
        { op: 'debit' as const, kind: 'hold' as const, movement: { userId: a.user.id, keyId: a.keyId, amount: 1000 + i, ref: `batch-${b}` } },
        { op: 'refund' as const, movement: { userId: a.user.id, keyId: a.keyId, amount: 500, ref: `batch-${b}` } },
      ]);
      ops.sort(() => Math.random() - 0.5);
      return t.ctx.db.transaction().execute((trx) => applyMany(trx, ops));
    });
    const outcomes = await Promise.all(batches);
    expect(outcomes.flat().every((failure) => failure === undefined)).toBe(true);
    for (const [i, a] of accounts.entries()) expect((await getUser(t.ctx.db, a.user.id))!.used).toBe(20 * (1000 + i - 500));
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('sums to the balances after a burst of concurrent top-ups, debits and refunds', async () => {
    const a = await seedAccount(t.ctx, 1, { quota: 0.5 });
    const b = await seedAccount(t.ctx, 0.2, { unlimited: true });
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const account = i % 2 === 0 ? a : b;
      const limited = account === a;
      switch (i % 5) {
        case 0:
          ops.push(t.ctx.db.transaction().execute((trx) => topUp(trx, { userId: account.user.id, amount: 1000 + i })));
          break;
        case 4:
          ops.push(
            t.ctx.db.transaction().execute((trx) => refund(trx, { userId: account.user.id, keyId: account.keyId, keyLimited: limited, amount: 7 })),
          );
          break;
        default:
          ops.push(tryDebit(account.user.id, account.keyId, limited, 9_000 + i));
      }
    }
    await Promise.all(ops);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('never overspends: parallel debits against exact funds succeed exactly as often as they fit', async () => {
    const price = 250_000;
    const account = await seedAccount(t.ctx, 1.0, { unlimited: true }); // funds for exactly 4
    const results = await Promise.all(Array.from({ length: 40 }, () => tryDebit(account.user.id, account.keyId, false, price)));
    expect(results.filter((r) => r === 'ok')).toHaveLength(4);
    expect(results.filter((r) => r === 'account')).toHaveLength(36);
    const user = await getUser(t.ctx.db, account.user.id);
    expect(user).toMatchObject({ balance: 0, used: 1_000_000 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("a limited key's quota caps spending even when the account could pay", async () => {
    const account = await seedAccount(t.ctx, 100, { quota: 0.75 }); // key allows 3 x 0.25
    const results = await Promise.all(Array.from({ length: 12 }, () => tryDebit(account.user.id, account.keyId, true, 250_000)));
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r === 'key')).toHaveLength(9);
    // A failed key debit rolls back the account debit of the same transaction.
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 99_250_000, used: 750_000 });
    expect(await getKey(t.ctx.db, account.keyId)).toMatchObject({ quota_remain: 0, quota_used: 750_000 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('refuses fractional or negative amounts instead of rounding money', async () => {
    const account = await seedAccount(t.ctx, 1);
    await expect(tryDebit(account.user.id, account.keyId, false, 0.5)).rejects.toThrow(/integer/);
    await expect(tryDebit(account.user.id, account.keyId, false, -1)).rejects.toThrow(/integer/);
  });
});
