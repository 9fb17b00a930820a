import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atOnceFor } from '../src/db/at-once.ts';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { applyAllAtOnce } from '../src/modules/billing/ledger-at-once.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { InsufficientFunds, type LedgerOp } from '../src/modules/billing/ledger.ts';
import type { TextMoneyOp } from '../src/modules/text/text-money.ts';
import { createTestApp, seedAccount, usingPostgres, type TestApp } from './harness.ts';

// SQLite writes a group-committed batch of text holds and settlements in one synchronous
// transaction when every payer can pay; otherwise the careful path decides op by op.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

type Account = Awaited<ReturnType<typeof seedAccount>>;
const movement = (a: Account, amount: number, keyLimited = false) => ({ userId: a.user.id, keyId: a.keyId, keyLimited, amount, ref: 'req' });
const ledgerRows = async (userId: string) => t.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('user_id', '=', userId).where('kind', 'in', ['hold', 'charge', 'refund']).orderBy('id').execute();
const settle = (a: Account, refund: number, cost: number, limited = false): TextMoneyOp => ({
  kind: 'settle',
  movement: movement(a, refund, limited),
  usage: { user_id: a.user.id, key_id: a.keyId, model: 'chatgen-4-haiku', endpoint: 'messages', request_id: `r${refund}`, input_tokens: 3, output_tokens: 4, cost, status: 'ok', created_at: Date.now() },
});

describe.runIf(!usingPostgres)('ledger movements written at once [sqlite]', () => {
  it('nets each account and key and writes a ledger row per movement (none for a zero refund)', async () => {
    const a = await seedAccount(t.ctx, 1);
    const b = await seedAccount(t.ctx, 1, { quota: 0.5 });
    const ops: LedgerOp[] = [
      { op: 'debit', kind: 'hold', movement: movement(a, 300_000) },
      { op: 'debit', kind: 'hold', movement: movement(b, 200_000, true) },
      { op: 'refund', movement: movement(a, 100_000) },
      { op: 'refund', movement: movement(b, 0, true) },
    ];
    atOnceFor(t.ctx.db)!((statement) => applyAllAtOnce(statement, ops));
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 800_000, used: 200_000 });
    expect(await getKey(t.ctx.db, a.keyId)).toMatchObject({ quota_used: 200_000 });
    expect(await getKey(t.ctx.db, b.keyId)).toMatchObject({ quota_remain: 300_000, quota_used: 200_000 });
    expect((await ledgerRows(a.user.id)).map((r) => [r.kind, r.balance_delta])).toEqual([['hold', -300_000], ['refund', 100_000]]);
    expect((await ledgerRows(b.user.id)).map((r) => r.kind)).toEqual(['hold']);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a text call through the group commit: hold, then settlement with its usage row', async () => {
    const a = await seedAccount(t.ctx, 1);
    await t.ctx.textMoney.add({ kind: 'hold', movement: movement(a, 300_000) });
    await t.ctx.textMoney.add(settle(a, 100_000, 200_000));
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 800_000, used: 200_000 });
    const usage = await t.ctx.db.selectFrom('usage').select(['cost', 'status']).where('user_id', '=', a.user.id).execute();
    expect(usage).toEqual([{ cost: 200_000, status: 'ok' }]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('changes nothing when one payer is short; the batch then ends op by op as the careful path decides', async () => {
    const rich = await seedAccount(t.ctx, 1);
    const poor = await seedAccount(t.ctx, 0.1);
    const atOnce = atOnceFor(t.ctx.db)!;
    const ops: LedgerOp[] = [
      { op: 'debit', kind: 'hold', movement: movement(rich, 50_000) },
      { op: 'debit', kind: 'hold', movement: movement(poor, 150_000) },
    ];
    expect(() => atOnce((statement) => applyAllAtOnce(statement, ops))).toThrow(/CHECK constraint/);
    expect(await getUser(t.ctx.db, rich.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await ledgerRows(rich.user.id)).toEqual([]);

    const outcomes = await Promise.allSettled(ops.map((op) => t.ctx.textMoney.add({ kind: 'hold', movement: op.movement })));
    expect(outcomes[0]!.status).toBe('fulfilled');
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.any(InsufficientFunds) });
    expect(await getUser(t.ctx.db, rich.user.id)).toMatchObject({ balance: 950_000, used: 50_000 });
    expect(await getUser(t.ctx.db, poor.user.id)).toMatchObject({ balance: 100_000, used: 0 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('will not run inside an open transaction on the write connection (it would become part of it)', async () => {
    const a = await seedAccount(t.ctx, 1);
    const atOnce = atOnceFor(t.ctx.db)!;
    await t.ctx.db.transaction().execute(async () => {
      expect(() => atOnce((statement) => applyAllAtOnce(statement, [{ op: 'debit', kind: 'hold', movement: movement(a, 1) }]))).toThrow(/transaction is open/);
    });
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 1_000_000 });
  });
});
