import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atOnceFor } from '../src/db/db.ts';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { applyAllAtOnce } from '../src/modules/billing/ledger-at-once.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { InsufficientFunds } from '../src/modules/billing/ledger.ts';
import { HoldAlreadySettled, type TextClose, type TextHold, type TextMoneyOp, type TextRelease, type TextSettle, type TextSpend } from '../src/modules/text-money/ops.ts';
import { writeTextMoneyWhole } from '../src/modules/text-money/whole.ts';
import { writeTextMoneyCarefully } from '../src/modules/text-money/careful.ts';
import { backendName, createTestApp, seedAccount, usingPostgres, type TestApp } from './harness.ts';

// A group-committed batch of text holds and settlements is written whole when every payer can pay
// (SQLite: one synchronous transaction; Postgres: one statement); otherwise the careful path decides
// op by op. Either way the money must end exactly as the careful path would leave it.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

type Account = Awaited<ReturnType<typeof seedAccount>>;
let calls = 0;
const movement = (a: Account, amount: number, keyLimited: boolean, ref: string) => ({ userId: a.user.id, keyId: a.keyId, keyLimited, amount, ref });
const hold = (a: Account, amount: number, limited = false): TextHold => {
  const callId = `call-${++calls}`;
  return {
    kind: 'hold',
    movement: movement(a, amount, limited, callId),
    hold: { call_id: callId, user_id: a.user.id, key_id: a.keyId, key_limited: limited ? 1 : 0, amount, model: 'chatgen-4-haiku', endpoint: 'messages', request_id: callId, created_at: Date.now() },
  };
};
const NO_CLASSES = { cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, input_cost: 0, cache_read_cost: 0, cache_write_cost: 0, output_cost: 0 };
const settle = (h: TextHold, refund: number, cost: number): TextSettle => ({
  kind: 'settle',
  callId: h.hold.call_id,
  movement: { ...h.movement, amount: refund },
  usage: { user_id: h.movement.userId, key_id: h.movement.keyId!, model: 'chatgen-4-haiku', endpoint: 'messages', request_id: `r${refund}`, input_tokens: 3, output_tokens: 4, cost, status: 'ok', created_at: Date.now(), ...NO_CLASSES },
});
const openHolds = (userId: string) => t.ctx.db.selectFrom('text_holds').select('call_id').where('user_id', '=', userId).execute();
const ledgerRows = (userId: string) =>
  t.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('user_id', '=', userId).where('kind', 'in', ['hold', 'charge', 'refund']).orderBy('id').execute();
const usageRows = (userId: string) => t.ctx.db.selectFrom('usage').select(['cost', 'status']).where('user_id', '=', userId).orderBy('id').execute();

describe(`text money written whole [${backendName}]`, () => {
  it('nets each account and key, writes a ledger row per movement (none for a zero refund) and the usage rows', async () => {
    const a = await seedAccount(t.ctx, 1);
    const b = await seedAccount(t.ctx, 1, { quota: 0.5 });
    const [ha, hb] = [hold(a, 300_000), hold(b, 200_000, true)];
    expect(await writeTextMoneyWhole(t.ctx.db)!([ha, hb])).toEqual([undefined, undefined]);
    expect(await openHolds(a.user.id)).toEqual([{ call_id: ha.hold.call_id }]);
    expect(await writeTextMoneyWhole(t.ctx.db)!([settle(ha, 100_000, 200_000), settle(hb, 0, 200_000)])).toEqual([undefined, undefined]);
    expect(await openHolds(a.user.id)).toEqual([]);
    expect(await openHolds(b.user.id)).toEqual([]);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 800_000, used: 200_000 });
    expect(await getKey(t.ctx.db, a.keyId)).toMatchObject({ quota_used: 200_000 });
    expect(await getKey(t.ctx.db, b.keyId)).toMatchObject({ quota_remain: 300_000, quota_used: 200_000 });
    expect((await ledgerRows(a.user.id)).map((r) => [r.kind, r.balance_delta])).toEqual([['hold', -300_000], ['refund', 100_000]]);
    expect((await ledgerRows(b.user.id)).map((r) => r.kind)).toEqual(['hold']);
    expect(await usageRows(a.user.id)).toEqual([{ cost: 200_000, status: 'ok' }]);
    expect(await usageRows(b.user.id)).toEqual([{ cost: 200_000, status: 'ok' }]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('changes nothing when one payer is short; through the group commit the batch then ends op by op', async () => {
    const rich = await seedAccount(t.ctx, 1);
    const poor = await seedAccount(t.ctx, 0.1);
    const shortKey = await seedAccount(t.ctx, 1, { quota: 0.1 });
    for (const batch of [[hold(rich, 50_000), hold(poor, 150_000)], [hold(rich, 50_000), hold(shortKey, 150_000, true)]]) {
      await expect(writeTextMoneyWhole(t.ctx.db)!(batch)).rejects.toThrow(/cannot pay|missing or short/i);
    }
    expect(await getUser(t.ctx.db, rich.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await getKey(t.ctx.db, shortKey.keyId)).toMatchObject({ quota_remain: 100_000, quota_used: 0 });
    expect(await ledgerRows(rich.user.id)).toEqual([]);

    const outcomes = await Promise.allSettled([hold(rich, 50_000), hold(poor, 150_000), hold(shortKey, 150_000, true)].map((op) => t.ctx.textMoney.add(op)));
    expect(outcomes[0]!.status).toBe('fulfilled');
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: new InsufficientFunds('account') });
    expect(outcomes[2]).toMatchObject({ status: 'rejected', reason: new InsufficientFunds('key') });
    expect(await getUser(t.ctx.db, rich.user.id)).toMatchObject({ balance: 950_000, used: 50_000 });
    expect(await getUser(t.ctx.db, poor.user.id)).toMatchObject({ balance: 100_000, used: 0 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a settlement whose open hold is gone (the sweeper gave it back) moves no money and writes no usage row', async () => {
    const a = await seedAccount(t.ctx, 1);
    const [kept, swept] = [hold(a, 300_000), hold(a, 200_000)];
    await writeTextMoneyWhole(t.ctx.db)!([kept, swept]);
    await t.ctx.db.deleteFrom('text_holds').where('call_id', '=', swept.hold.call_id).execute();
    const outcomes = await writeTextMoneyWhole(t.ctx.db)!([settle(kept, 100_000, 200_000), settle(swept, 150_000, 50_000)]);
    expect(outcomes[0]).toBeUndefined();
    expect(outcomes[1]).toBeInstanceOf(HoldAlreadySettled);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 1_000_000 - 200_000 - 200_000, used: 400_000 });
    expect(await usageRows(a.user.id)).toEqual([{ cost: 200_000, status: 'ok' }]);
    // The careful path (through the group commit) says the same.
    const third = hold(a, 10_000);
    await t.ctx.textMoney.add(third);
    await t.ctx.db.deleteFrom('text_holds').where('call_id', '=', third.hold.call_id).execute();
    await expect(t.ctx.textMoney.add(settle(third, 10_000, 0))).rejects.toBeInstanceOf(HoldAlreadySettled);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 590_000, used: 410_000 });
  });

  it('two settlements of one hold in a batch (the sweeper met the call): it is refunded once, on both paths', async () => {
    const a = await seedAccount(t.ctx, 1);
    const first = hold(a, 300_000);
    await writeTextMoneyWhole(t.ctx.db)!([first]);
    const whole = await writeTextMoneyWhole(t.ctx.db)!([settle(first, 100_000, 200_000), settle(first, 300_000, 0)]);
    expect(whole[0]).toBeUndefined();
    expect(whole[1]).toBeInstanceOf(HoldAlreadySettled);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 800_000, used: 200_000 });

    const second = hold(a, 100_000);
    await writeTextMoneyWhole(t.ctx.db)!([second]);
    const careful = await t.ctx.db.transaction().execute((trx) => writeTextMoneyCarefully(trx, [settle(second, 100_000, 0), settle(second, 40_000, 60_000)]));
    expect(careful[0]).toBeUndefined();
    expect(careful[1]).toBeInstanceOf(HoldAlreadySettled);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 800_000, used: 200_000 });
    expect(await usageRows(a.user.id)).toHaveLength(2);
    expect(await openHolds(a.user.id)).toEqual([]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  // A float's ops, through the group commit (SQLite: whole; Postgres: the careful path, as the
  // statement carries no float ops) and straight through the careful path: the same money.
  const spend = (h: TextHold, cost: number): TextSpend => ({ kind: 'spend', callId: h.hold.call_id, cost, keyId: h.movement.keyId!, usage: settle(h, 0, cost).usage });
  const release = (h: TextHold, amount: number): TextRelease => ({ kind: 'release', callId: h.hold.call_id, movement: { ...h.movement, amount } });
  const close = (h: TextHold): TextClose => ({ kind: 'close', callId: h.hold.call_id, movement: { ...h.movement, amount: 0 } });
  const viaGroupCommit = (ops: TextMoneyOp[]) => Promise.allSettled(ops.map((op) => t.ctx.textMoney.add(op)));
  const viaCarefulPath = async (ops: TextMoneyOp[]) =>
    (await t.ctx.db.transaction().execute((trx) => writeTextMoneyCarefully(trx, ops))).map((reason) => (reason ? { status: 'rejected', reason } : { status: 'fulfilled' }));

  for (const [path, write] of [['the group commit', viaGroupCommit], ['the careful path', viaCarefulPath]] as const) {
    it(`a float through ${path}: spends add up in the row, a release and the close give back the rest; a spend after the close is refused`, async () => {
      const a = await seedAccount(t.ctx, 1, { quota: 0.8 });
      const float = hold(a, 400_000, true);
      await t.ctx.textMoney.add(float);
      const first = await write([spend(float, 30_000), spend(float, 20_000), release(float, 100_000), spend(float, 50_000)]);
      expect(first.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect(await t.ctx.db.selectFrom('text_holds').select(['amount', 'spent']).where('call_id', '=', float.hold.call_id).executeTakeFirst()).toEqual({ amount: 300_000, spent: 100_000 });
      // Spends move no money until the close: the float's hold and the release are all the ledger has.
      expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 700_000, used: 300_000 });

      const second = await write([spend(float, 5_000), close(float), spend(float, 7_000), release(float, 1)]);
      expect(second.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
      expect(second.slice(2).map((o) => (o as PromiseRejectedResult).reason)).toEqual([expect.any(HoldAlreadySettled), expect.any(HoldAlreadySettled)]);
      expect(await openHolds(a.user.id)).toEqual([]);
      expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 895_000, used: 105_000 });
      expect(await getKey(t.ctx.db, a.keyId)).toMatchObject({ quota_remain: 695_000, quota_used: 105_000 });
      expect((await ledgerRows(a.user.id)).map((r) => [r.kind, Number(r.balance_delta)])).toEqual([['hold', -400_000], ['refund', 100_000], ['refund', 195_000]]);
      expect((await usageRows(a.user.id)).map((r) => Number(r.cost))).toEqual([30_000, 20_000, 50_000, 5_000]);
      expect(await auditLedger(t.ctx.db)).toEqual([]);
    });
  }

  it('a release never gives back more than the float has not spent', async () => {
    const a = await seedAccount(t.ctx, 1);
    const float = hold(a, 100_000);
    await t.ctx.textMoney.add(float);
    await t.ctx.textMoney.add(spend(float, 60_000));
    await expect(t.ctx.textMoney.add(release(float, 40_001))).rejects.toBeInstanceOf(HoldAlreadySettled);
    await t.ctx.textMoney.add(release(float, 40_000));
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 940_000, used: 60_000 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('refuses amounts that are not whole non-negative units before writing anything', async () => {
    const a = await seedAccount(t.ctx, 1);
    await expect(writeTextMoneyWhole(t.ctx.db)!([hold(a, -5)])).rejects.toThrow(/integer/);
    await expect(writeTextMoneyWhole(t.ctx.db)!([hold(a, 0.5)])).rejects.toThrow(/integer/);
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
  });
});

describe.runIf(usingPostgres)('floats on the careful path in parallel [postgres]', () => {
  it('two batches spending from the same two floats in opposite orders do not deadlock', async () => {
    const a = await seedAccount(t.ctx, 1);
    const [first, second] = [hold(a, 100_000), hold(a, 100_000)];
    await t.ctx.textMoney.add(first);
    await t.ctx.textMoney.add(second);
    const spendOf = (h: TextHold): TextSpend => ({ kind: 'spend', callId: h.hold.call_id, cost: 1, keyId: a.keyId, usage: settle(h, 0, 1).usage });
    const batch = (ops: TextMoneyOp[]) => t.ctx.db.transaction().execute((trx) => writeTextMoneyCarefully(trx, ops));
    for (let round = 0; round < 10; round++) {
      const outcomes = await Promise.all([batch([spendOf(first), spendOf(second)]), batch([spendOf(second), spendOf(first)])]);
      expect(outcomes.flat()).toEqual([undefined, undefined, undefined, undefined]);
    }
    expect(await t.ctx.db.selectFrom('text_holds').select('spent').where('user_id', '=', a.user.id).execute()).toEqual([{ spent: 20 }, { spent: 20 }]);
  });
});

describe.runIf(!usingPostgres)('the synchronous SQLite transaction [sqlite]', () => {
  it('a batch of 39 spends writes 39 usage rows, each once and in order (multi-row inserts of 32, 4, 2 and 1 rows)', async () => {
    const a = await seedAccount(t.ctx, 1);
    const float = hold(a, 500_000);
    await t.ctx.textMoney.add(float);
    const costs = Array.from({ length: 39 }, (_, i) => 1_000 + i);
    const spends = costs.map((cost): TextSpend => ({ kind: 'spend', callId: float.hold.call_id, cost, keyId: a.keyId, usage: { ...settle(float, 0, cost).usage, request_id: `r-${cost}` } }));
    expect(await writeTextMoneyWhole(t.ctx.db)!(spends)).toEqual(costs.map(() => undefined));
    const rows = await t.ctx.db.selectFrom('usage').select(['cost', 'request_id']).where('user_id', '=', a.user.id).orderBy('id').execute();
    expect(rows.map((r) => [Number(r.cost), r.request_id])).toEqual(costs.map((cost) => [cost, `r-${cost}`]));
    expect(await t.ctx.db.selectFrom('text_holds').select('spent').where('call_id', '=', float.hold.call_id).executeTakeFirst()).toEqual({ spent: costs.reduce((x, y) => x + y, 0) });
  });

  it('will not run inside an open transaction on the write connection (it would become part of it)', async () => {
    const a = await seedAccount(t.ctx, 1);
    const atOnce = atOnceFor(t.ctx.db)!;
    await t.ctx.db.transaction().execute(async () => {
      expect(() => atOnce((statement) => applyAllAtOnce(statement, [{ op: 'debit', kind: 'hold', movement: movement(a, 1, false, 'x') }]))).toThrow(/transaction is open/);
    });
    expect(await getUser(t.ctx.db, a.user.id)).toMatchObject({ balance: 1_000_000 });
  });
});
