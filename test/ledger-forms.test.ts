import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db, atOnceFor } from '../src/db/db.ts';
import { WholeBatchRefused } from '../src/db/errors.ts';
import { createKey, createUser } from '../src/modules/accounts/accounts.service.ts';
import { applyAllAtOnce } from '../src/modules/billing/ledger-at-once.ts';
import { MOVES_SQL, netsOf } from '../src/modules/billing/ledger-plan.ts';
import type { LedgerRowValues } from '../src/modules/billing/ledger-rows.ts';
import { ledgerMovementCtes, ledgerRowsAllFound } from '../src/modules/billing/ledger-statement.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { applyMany, type LedgerOp } from '../src/modules/billing/ledger.ts';
import { backendName, createTestApp, usingPostgres, type TestApp } from './harness.ts';

// The ledger's one semantics (src/modules/billing/ledger-plan.ts) has three forms: the careful path,
// SQLite's at-once path, Postgres' statement. Random batches (several accounts and keys, limited
// and not, holds, charges, overruns, refunds, refunds of 0, debits that overdraw or name a missing
// account or key) go through the careful path and this backend's whole-batch form, each on a world of its own
// made the same, and must leave the balances, quotas and ledger rows that a model written here from
// the rules alone says, and that the plan's nets say.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

const U = 1_000; // units per step: balances and amounts are small multiples, so batches overdraw often
type Kind = 'hold' | 'charge' | 'overrun' | 'refund';
type OpSpec = { kind: Kind; account: number; key: number; flip: boolean; amount: number; ghost: 'none' | 'account' | 'key' };
type Spec = { accounts: { balance: number; debt: number; keys: (number | null)[] }[]; ops: OpSpec[] };

const spec: fc.Arbitrary<Spec> = fc.record({
  // Per account its balance and keys: null is an unlimited key, a number a limited key's quota.
  accounts: fc.array(fc.record({ balance: fc.nat(12), debt: fc.constantFrom(0, 0, 0, 1, 3, 15), keys: fc.array(fc.option(fc.nat(8), { nil: null }), { minLength: 1, maxLength: 2 }) }), { minLength: 1, maxLength: 3 }),
  ops: fc.array(
    fc.record({
      kind: fc.constantFrom<Kind>('hold', 'charge', 'overrun', 'refund'),
      account: fc.nat(),
      key: fc.nat(), // modulo the account's keys plus one: the last is no key
      flip: fc.nat(9).map((n) => n === 0), // a movement whose limited flag is not its key's (a key changed since its hold)
      amount: fc.nat(6),
      ghost: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'none', 'account', 'key'),
    }),
    { minLength: 1, maxLength: 16 },
  ),
});

type World = { users: string[]; keys: { id: string; limited: boolean }[][]; label: Map<string, string> };

async function makeWorld(s: Spec): Promise<World> {
  const world: World = { users: [], keys: [], label: new Map([['usr_ghost', 'ghost account'], ['key_ghost', 'ghost key']]) };
  for (const [a, account] of s.accounts.entries()) {
    const user = await createUser(t.ctx, { name: `forms-${a}`, balance: (account.balance * U) / 1e6 });
    world.users.push(user.id);
    world.label.set(user.id, `a${a}`);
    const keys = [];
    for (const [k, quota] of account.keys.entries()) {
      const key = await createKey(t.ctx, { user_id: user.id, ...(quota === null ? { unlimited: true } : { quota: (quota * U) / 1e6 }) });
      keys.push({ id: key.id, limited: quota !== null });
      world.label.set(key.id, `a${a}k${k}`);
    }
    world.keys.push(keys);
    // An earlier overrun may have left the account, and its first key, below zero.
    if (account.debt > 0) {
      const movement = { userId: user.id, keyId: keys[0]!.id, keyLimited: keys[0]!.limited, amount: account.debt * U, ref: 'debt' };
      await t.ctx.db.transaction().execute((trx) => applyMany(trx, [{ op: 'debit', kind: 'overrun', movement }]));
    }
  }
  return world;
}

function opsIn(world: World, specs: OpSpec[]): LedgerOp[] {
  return specs.map((o, i) => {
    const a = o.account % world.users.length;
    const key = world.keys[a]![o.key % (world.keys[a]!.length + 1)];
    // Refunds never name a missing row: there the careful path writes a row and no balance (ledger-plan.ts).
    const ghost = o.kind === 'refund' ? 'none' : o.ghost;
    const movement = {
      userId: ghost === 'account' ? 'usr_ghost' : world.users[a]!,
      keyId: ghost === 'key' ? 'key_ghost' : (key?.id ?? null),
      keyLimited: (key?.limited ?? false) !== o.flip,
      amount: o.amount * U,
      ref: `r${i}`,
      note: i % 3 === 0 ? 'note' : null,
    };
    return o.kind === 'refund' ? { op: 'refund', movement } : { op: 'debit', kind: o.kind, movement };
  });
}

type Fund = { balance: number; used: number } | { remain: number; used: number };
type Funds = Map<string, Fund>;
type Row = (string | number | null)[];

async function fundsOf(world: World): Promise<Funds> {
  const users = await t.ctx.db.selectFrom('users').select(['id', 'balance', 'used']).where('id', 'in', world.users).execute();
  const keys = await t.ctx.db.selectFrom('api_keys').select(['id', 'quota_remain', 'quota_used']).where('id', 'in', world.keys.flat().map((k) => k.id)).execute();
  return new Map([
    ...users.map((u): [string, Fund] => [world.label.get(u.id)!, { balance: Number(u.balance), used: Number(u.used) }]),
    ...keys.map((k): [string, Fund] => [world.label.get(k.id)!, { remain: Number(k.quota_remain), used: Number(k.quota_used) }]),
  ]);
}

type RowLike = Pick<LedgerRowValues, 'user_id' | 'key_id' | 'kind' | 'balance_delta' | 'used_delta' | 'key_remain_delta' | 'key_used_delta' | 'ref' | 'note'>;
const sorted = (rows: Row[]) => rows.sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
/** Rows without ids and times, accounts and keys by their labels, in one order. */
const canonical = (world: World, rows: RowLike[]): Row[] =>
  sorted(
    rows.map((r) => {
      const deltas = [r.balance_delta, r.used_delta, r.key_remain_delta, r.key_used_delta].map((n) => Number(n) || 0); // -0 is 0
      return [world.label.get(r.user_id)!, r.key_id ? world.label.get(r.key_id)! : null, r.kind, ...deltas, r.ref ?? null, r.note ?? null];
    }),
  );

const ledgerOf = async (world: World) =>
  canonical(world, await t.ctx.db.selectFrom('ledger').selectAll().where('user_id', 'in', world.users).where('kind', 'in', ['hold', 'charge', 'overrun', 'refund']).where('ref', '!=', 'debt').execute());

/**
 * The rules, written out on their own: per account in id order its refunds, then its debits one by
 * one in key id order, then its overruns (never refused for want of money: they may go below zero).
 */
function model(world: World, ops: LedgerOp[], start: Funds) {
  const funds: Funds = new Map([...start].map(([id, f]) => [id, { ...f }]));
  const refused: ('account' | 'key' | undefined)[] = ops.map(() => undefined);
  const rows: Row[] = [];
  const at = (id: string | null | undefined) => (id ? funds.get(world.label.get(id)!) : undefined) as { balance: number; remain: number; used: number } | undefined;
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const [user, key] = [(i: number) => ops[i]!.movement.userId, (i: number) => ops[i]!.movement.keyId ?? ''];
  const order = ops.map((_, i) => i).sort((x, y) => compare(user(x), user(y)) || compare(key(x), key(y)) || x - y);
  const byAccount = new Map<string, number[]>();
  for (const i of order) byAccount.set(user(i), [...(byAccount.get(user(i)) ?? []), i]);
  for (const indices of byAccount.values()) {
    const kindOf = (i: number) => (ops[i]!.op === 'debit' ? (ops[i] as { kind: string }).kind : 'refund');
    const refunds = indices.filter((i) => kindOf(i) === 'refund');
    const debits = indices.filter((i) => kindOf(i) === 'hold' || kindOf(i) === 'charge');
    for (const i of [...refunds, ...debits, ...indices.filter((i) => kindOf(i) === 'overrun')]) {
      const overrun = kindOf(i) === 'overrun';
      const { userId, keyId, keyLimited, amount, ref, note } = ops[i]!.movement;
      const sign = ops[i]!.op === 'refund' ? -1 : 1; // what it takes
      if (sign < 0 && amount === 0) continue;
      const [account, key] = [at(userId), at(keyId)];
      const limited = Boolean(keyId && keyLimited);
      // Only a debit that is not an overrun asks its payers for money (a refund never does).
      const asks = sign > 0 && !overrun;
      if (!account || (asks && account.balance < amount)) refused[i] = 'account';
      else if (keyId && (!key || (asks && limited && key.remain < amount))) refused[i] = 'key';
      if (refused[i]) continue;
      account!.balance -= sign * amount;
      account!.used += sign * amount;
      if (key) key.used += sign * amount;
      if (key && limited) key.remain -= sign * amount;
      const kind = ops[i]!.op === 'debit' ? (ops[i] as { kind: string }).kind : 'refund';
      rows.push([world.label.get(userId)!, keyId ? world.label.get(keyId)! : null, kind, -sign * amount || 0, sign * amount || 0, limited ? -sign * amount || 0 : 0, keyId ? sign * amount || 0 : 0, ref ?? null, note ?? null]);
    }
  }
  return { refused, funds, rows: sorted(rows) };
}

/** The plan's nets and rows for the ops that went through, applied to the start. */
function planned(world: World, ops: LedgerOp[], start: Funds) {
  const nets = netsOf(ops, 0);
  const funds: Funds = new Map([...start].map(([id, f]) => [id, { ...f }]));
  for (const [id, { net }] of nets.accounts) {
    const account = funds.get(world.label.get(id)!) as { balance: number; used: number };
    Object.assign(account, { balance: account.balance - net, used: account.used + net });
  }
  for (const [id, net] of nets.keys) {
    const key = funds.get(world.label.get(id)!) as { remain: number; used: number };
    Object.assign(key, { remain: key.remain - net.remain, used: key.used + net.used });
  }
  return { funds, rows: canonical(world, nets.rows) };
}

const STATEMENT = `with src as (
  select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::text[]) as m(kind, user_id, key_id, key_limited, amount, ref, note)
  where ${MOVES_SQL}
),
${ledgerMovementCtes('src', '$8')}
select ${ledgerRowsAllFound('src')} as ok`;

/** This backend's whole-batch form: SQLite's at-once path or Postgres' statement. */
async function wholeBatch(ops: LedgerOp[]): Promise<void> {
  const atOnce = atOnceFor(t.ctx.db);
  if (atOnce) return atOnce((statement) => applyAllAtOnce(statement, ops));
  const m = ops.map((op) => op.movement);
  const columns = [ops.map((op) => (op.op === 'debit' ? op.kind : 'refund')), m.map((x) => x.userId), m.map((x) => x.keyId ?? null), m.map((x) => (x.keyLimited ? 1 : 0)), m.map((x) => x.amount), m.map((x) => x.ref ?? null), m.map((x) => x.note ?? null)];
  if (!(t.ctx.db instanceof Db) || !t.ctx.db.namedStatements) throw new Error('no whole-batch form on this database');
  await t.ctx.db.namedStatements('test_ledger_forms', STATEMENT, [...columns, Date.now()]);
}

describe(`ledger forms [${backendName}]`, () => {
  it(`random batches: the careful path and the ${usingPostgres ? 'statement' : 'at-once'} form leave what the rules and the plan say`, async () => {
    let whole = 0;
    await fc.assert(
      fc.asyncProperty(spec, async (s) => {
        const [carefulWorld, wholeWorld] = [await makeWorld(s), await makeWorld(s)];
        const start = await fundsOf(carefulWorld);
        expect(await fundsOf(wholeWorld)).toEqual(start);

        const ops = opsIn(carefulWorld, s.ops);
        const expected = model(carefulWorld, ops, start);
        const outcomes = await t.ctx.db.transaction().execute((trx) => applyMany(trx, ops));
        expect(outcomes.map((o) => o?.payer)).toEqual(expected.refused);
        const careful = { funds: await fundsOf(carefulWorld), rows: await ledgerOf(carefulWorld) };
        expect(careful).toEqual({ funds: expected.funds, rows: expected.rows });
        expect(careful).toEqual(planned(carefulWorld, ops.filter((_, i) => !outcomes[i]), start));

        // All or nothing: it goes through exactly when the careful path refuses nothing, and then ends the same.
        const result = await wholeBatch(opsIn(wholeWorld, s.ops)).then(() => 'written', (error: unknown) => error);
        const all = { funds: await fundsOf(wholeWorld), rows: await ledgerOf(wholeWorld) };
        if (expected.refused.every((r) => r === undefined)) {
          whole++;
          expect(result).toBe('written');
          expect(all).toEqual(careful);
          expect(all).toEqual(planned(wholeWorld, opsIn(wholeWorld, s.ops), start));
        } else {
          expect(result).toBeInstanceOf(WholeBatchRefused);
          expect(all).toEqual({ funds: start, rows: [] });
        }
      }),
      { numRuns: 100 },
    );
    // Both branches were taken: some batches went through whole.
    expect(whole).toBeGreaterThan(0);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  }, 240_000);
});
