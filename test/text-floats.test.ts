import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { settleLostHolds } from '../src/modules/text-money/sweeper.ts';
import { promptTokens } from '../src/lib/tokens/tokens.ts';
import { toBalance } from '../src/lib/money.ts';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { waitUntil } from './support/receiver.ts';

// A process takes text calls' holds from a float: one durable hold per key worth TEXT_FLOAT_CALLS
// calls (text/text-floats.ts). Each call still gets its usage row and is charged what it cost;
// the balance routes show what calls cost, never the float; closing the float (idle, shutdown, or
// the sweeper after the process died) gives back what it did not spend; a 402 stays exact.

const FLOATS = { WORKERS: '0', TEXT_FLOAT_CALLS: '32' };
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ ...FLOATS, ...env });
  cleanups.push(() => t.close());
  return t;
}

type Account = Awaited<ReturnType<typeof seedAccount>>;
const MODEL = 'chatgen-4-haiku';
const body = (prompt: string, maxTokens = 64) => ({ model: MODEL, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] });
const call = (t: TestApp, a: Account, prompt: string, maxTokens?: number) =>
  t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': a.key }, payload: body(prompt, maxTokens) });
/** What a call's hold is: the prompt plus max_tokens at the model's price. */
const holdOf = (t: TestApp, prompt: string, maxTokens = 64) => t.ctx.pricing.tokenUnits(MODEL, promptTokens({ messages: [{ role: 'user', parts: [{ type: 'text', text: prompt }] }] }), maxTokens);

const openHolds = (t: TestApp, userId: string) => t.ctx.db.selectFrom('text_holds').selectAll().where('user_id', '=', userId).execute();
const usageCost = async (t: TestApp, userId: string) => {
  const rows = await t.ctx.db.selectFrom('usage').select(['cost', 'status']).where('user_id', '=', userId).execute();
  return { rows, cost: rows.reduce((sum, r) => sum + Number(r.cost), 0) };
};
const moneyRows = (t: TestApp, userId: string) =>
  t.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta', 'note']).where('user_id', '=', userId).where('kind', 'in', ['hold', 'refund']).orderBy('id').execute();
const column = async (t: TestApp, userId: string) => {
  const user = await t.ctx.db.selectFrom('users').select(['balance', 'used']).where('id', '=', userId).executeTakeFirstOrThrow();
  return { balance: Number(user.balance), used: Number(user.used) };
};
const shown = async (t: TestApp, a: Account, url: string) => (await t.app.inject({ method: 'GET', url, headers: a.auth })).json();

describe(`text floats [${backendName}]`, () => {
  it('calls take their holds from one float: one ledger hold for ten calls; the balance routes show what the calls cost', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1);
    for (let i = 0; i < 10; i++) expect((await call(t, a, `question ${i}`)).statusCode).toBe(200);

    const [float, ...others] = await openHolds(t, a.user.id);
    expect(others).toEqual([]);
    expect(float).toMatchObject({ endpoint: 'float', amount: 32 * holdOf(t, 'question 0') });
    expect((await moneyRows(t, a.user.id)).map((r) => [r.kind, Number(r.balance_delta)])).toEqual([['hold', -Number(float!.amount)]]);
    // The balance routes write queued spends first, then leave out what the float has not spent.
    const account = await shown(t, a, '/v1/user/balance');
    const { rows, cost } = await usageCost(t, a.user.id);
    expect(rows).toHaveLength(10);
    expect(cost).toBeGreaterThan(0);
    expect(account).toMatchObject({ used_balance: toBalance(cost, t.ctx.config), remain_balance: toBalance(1_000_000 - cost, t.ctx.config) });
    expect(await shown(t, a, '/v1/balance')).toMatchObject({ used_balance: toBalance(cost, t.ctx.config) });

    await t.ctx.textFloats.closeAll();
    expect(await openHolds(t, a.user.id)).toEqual([]);
    expect(await column(t, a.user.id)).toEqual({ balance: 1_000_000 - cost, used: cost });
    expect((await moneyRows(t, a.user.id)).map((r) => [r.kind, Number(r.balance_delta), r.note])).toEqual([
      ['hold', -Number(float!.amount), 'text float'],
      ['refund', Number(float!.amount) - cost, 'text float closed'],
    ]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a limited key: its quota shows what the calls cost, and the float gives the rest back to it', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1, { quota: 0.5 });
    for (let i = 0; i < 3; i++) expect((await call(t, a, `limited ${i}`)).statusCode).toBe(200);
    const quota = await shown(t, a, '/v1/balance');
    const { cost } = await usageCost(t, a.user.id);
    expect(await openHolds(t, a.user.id)).toHaveLength(1);
    expect(quota).toMatchObject({ remain_balance: toBalance(500_000 - cost, t.ctx.config), used_balance: toBalance(cost, t.ctx.config) });
    await t.ctx.textFloats.closeAll();
    const key = await t.ctx.db.selectFrom('api_keys').select(['quota_remain', 'quota_used']).where('id', '=', a.keyId).executeTakeFirstOrThrow();
    expect([Number(key.quota_remain), Number(key.quota_used)]).toEqual([500_000 - cost, cost]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('the admin and console views show what calls cost while a float is open; a quota set is the quota shown', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1, { quota: 0.5 });
    for (let i = 0; i < 3; i++) expect((await call(t, a, `viewed ${i}`)).statusCode).toBe(200);
    await t.ctx.textMoney.flush();
    const { cost } = await usageCost(t, a.user.id);
    const [float] = await openHolds(t, a.user.id);
    expect(float).toMatchObject({ endpoint: 'float' });
    const money = (units: number) => toBalance(units, t.ctx.config);

    const users = (await t.app.inject({ method: 'GET', url: '/admin/users?limit=1000', headers: adminHeaders })).json().data;
    expect(users.find((u: { id: string }) => u.id === a.user.id)).toMatchObject({ balance: money(1_000_000 - cost), used: money(cost) });
    const keys = (await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${a.user.id}`, headers: adminHeaders })).json().data;
    expect(keys).toEqual([expect.objectContaining({ quota: money(500_000 - cost), quota_used: money(cost) })]);

    const email = `${a.user.id.toLowerCase()}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${a.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'correct horse battery' } });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const page = (await t.app.inject({ method: 'GET', url: '/console/api/account', headers: { cookie } })).json();
    expect(page).toMatchObject({ remain_balance: money(1_000_000 - cost), used_balance: money(cost) });

    // The operator sets the quota the key shows; once the float closes, the column says the same.
    const set = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${a.keyId}`, headers: adminHeaders, payload: { quota: 0.3 } });
    expect(set.json()).toMatchObject({ quota: 0.3 });
    expect(await shown(t, a, '/v1/balance')).toMatchObject({ remain_balance: 0.3 });
    await t.ctx.textFloats.closeAll();
    const key = await t.ctx.db.selectFrom('api_keys').select('quota_remain').where('id', '=', a.keyId).executeTakeFirstOrThrow();
    expect(Number(key.quota_remain)).toBe(300_000);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a float no call uses for TEXT_FLOAT_IDLE_MS is closed and gives back what it did not spend', async () => {
    const t = await app({ TEXT_FLOAT_IDLE_MS: '100' });
    const a = await seedAccount(t.ctx, 1);
    expect((await call(t, a, 'one call')).statusCode).toBe(200);
    await waitUntil('the idle float to close', async () => (await openHolds(t, a.user.id)).length === 0, 5000);
    const { cost } = await usageCost(t, a.user.id);
    expect(await column(t, a.user.id)).toEqual({ balance: 1_000_000 - cost, used: cost });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('forty calls at once on one key: each charged once, the sum exact', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => call(t, a, `parallel ${i}`)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(40).fill(200));
    const account = await shown(t, a, '/v1/user/balance');
    const { rows, cost } = await usageCost(t, a.user.id);
    expect(rows).toHaveLength(40);
    expect(account).toMatchObject({ used_balance: toBalance(cost, t.ctx.config) });
    await t.ctx.textFloats.closeAll();
    expect(await column(t, a.user.id)).toEqual({ balance: 1_000_000 - cost, used: cost });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('402 stays exact: a call the float cannot cover gets the money the float holds back first', async () => {
    const t = await app();
    const small = holdOf(t, 'first');
    // Enough for a float (at least 16 calls' worth) but not for 32 calls' worth of float: it holds balance / 8.
    const balance = 40 * small;
    const a = await seedAccount(t.ctx, balance / 1_000_000);
    expect((await call(t, a, 'first')).statusCode).toBe(200);
    const [float] = await openHolds(t, a.user.id);
    expect(Number(float!.amount)).toBe(Math.floor(balance / 8));
    const left = (await column(t, a.user.id)).balance;
    expect(left).toBe(balance - Number(float!.amount));

    // A call whose hold is more than the account's column has left, but not more than the account has.
    let maxTokens = 64;
    while (holdOf(t, 'big', maxTokens) <= left) maxTokens += 16;
    const big = holdOf(t, 'big', maxTokens);
    const { cost: spentSoFar } = await usageCost(t, a.user.id);
    await t.ctx.textMoney.flush();
    expect(big).toBeLessThanOrEqual(balance - spentSoFar);
    expect((await call(t, a, 'big', maxTokens)).statusCode).toBe(200);

    // And one that nothing can cover is refused, before any upstream call.
    await t.ctx.textMoney.flush();
    const { cost } = await usageCost(t, a.user.id);
    const refused = await call(t, a, 'too big', 65536);
    expect(refused.statusCode).toBe(402);
    expect((await usageCost(t, a.user.id)).rows).toHaveLength(2);

    await t.ctx.textFloats.closeAll();
    expect(await column(t, a.user.id)).toEqual({ balance: balance - cost, used: cost });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a call that needs the money of a float already closing waits for the close, not a 402', async () => {
    const t = await app();
    const small = holdOf(t, 'first');
    const balance = 40 * small;
    const a = await seedAccount(t.ctx, balance / 1_000_000);
    expect((await call(t, a, 'first')).statusCode).toBe(200);
    const left = (await column(t, a.user.id)).balance;
    let maxTokens = 64;
    while (holdOf(t, 'big', maxTokens) <= left) maxTokens += 16;

    // The float closes (as when it goes idle) while the call that needs its money arrives.
    const closing = t.ctx.textFloats.closeAll();
    const big = call(t, a, 'big', maxTokens);
    await closing;
    expect((await big).statusCode).toBe(200);
    await t.ctx.textFloats.closeAll();
    await t.ctx.textMoney.flush();
    const { cost } = await usageCost(t, a.user.id);
    expect(await column(t, a.user.id)).toEqual({ balance: balance - cost, used: cost });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('an account with too little for a float: every call holds alone', async () => {
    const t = await app();
    const small = holdOf(t, 'lean');
    const a = await seedAccount(t.ctx, (10 * small) / 1_000_000);
    expect((await call(t, a, 'lean')).statusCode).toBe(200);
    await t.ctx.textMoney.flush();
    expect(await openHolds(t, a.user.id)).toEqual([]);
    expect((await moneyRows(t, a.user.id)).map((r) => r.note)).toEqual([null, 'text ok']);
  });

  it('a process that dies with a float open: the sweeper closes it; the calls it settled stay charged', async () => {
    const database = await freshDatabase();
    cleanups.push(() => database.drop());
    const api = await createTestApp({ ...FLOATS, TEXT_HOLD_MAX_AGE_S: '1' }, database);
    cleanups.push(() => api.close());
    const a = await seedAccount(api.ctx, 1);

    const gateway = await startGateway({ ...database.env, ...FLOATS });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': a.key }, body: JSON.stringify(body(`before the crash ${i}`)) });
      expect(res.status).toBe(200);
    }
    await waitUntil('the three spends to commit', async () => (await usageCost(api, a.user.id)).rows.length === 3);
    const [float] = await openHolds(api, a.user.id);
    expect(float).toMatchObject({ endpoint: 'float' });
    expect(await gateway.stop('SIGKILL')).toBeNull();

    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await settleLostHolds(api.ctx)).toBe(1);
    const { rows, cost } = await usageCost(api, a.user.id);
    expect(rows.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    expect(await openHolds(api, a.user.id)).toEqual([]);
    expect(await column(api, a.user.id)).toEqual({ balance: 1_000_000 - cost, used: cost });
    expect((await moneyRows(api, a.user.id)).map((r) => r.note)).toEqual(['text float', 'text float lost']);
    expect(await auditLedger(api.ctx.db)).toEqual([]);
  });
});
