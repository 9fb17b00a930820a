import { afterAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { promptTokens } from '../src/lib/tokens/tokens.ts';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';

// An operator who sets a key's quota while the key is busy: the key's calls take their holds from a
// float (text-money/floats.ts) that holds many calls' worth, and the quota set must bind the next
// call all the same, in this process and in the others.

const FLOATS = { WORKERS: '0', TEXT_FLOAT_CALLS: '32', KEY_CACHE_POLL_MS: '50' };
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function app(env: Record<string, string> = {}, database?: Awaited<ReturnType<typeof freshDatabase>>): Promise<TestApp> {
  const t = await createTestApp({ ...FLOATS, ...env }, database);
  cleanups.push(() => t.close());
  return t;
}

type Account = Awaited<ReturnType<typeof seedAccount>>;
const MODEL = 'chatgen-4-haiku';
const call = (t: TestApp, a: Account, prompt: string) =>
  t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': a.key }, payload: { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: prompt }] } });
const holdOf = (t: TestApp, prompt: string) => t.ctx.pricing.tokenUnits(MODEL, promptTokens({ messages: [{ role: 'user', parts: [{ type: 'text', text: prompt }] }] }), 64);
const setQuota = (t: TestApp, a: Account, quota: number) => t.app.inject({ method: 'PATCH', url: `/admin/keys/${a.keyId}`, headers: adminHeaders, payload: { quota } });
const keyColumns = async (t: TestApp, a: Account) => {
  const key = await t.ctx.db.selectFrom('api_keys').select(['quota_remain', 'quota_used']).where('id', '=', a.keyId).executeTakeFirstOrThrow();
  return { remain: Number(key.quota_remain), used: Number(key.quota_used) };
};
const spent = async (t: TestApp, a: Account) => {
  await t.ctx.textMoney.flush();
  const rows = await t.ctx.db.selectFrom('usage').select('cost').where('key_id', '=', a.keyId).execute();
  return rows.reduce((sum, r) => sum + Number(r.cost), 0);
};
const floatRows = (t: TestApp, a: Account) => t.ctx.db.selectFrom('text_holds').selectAll().where('key_id', '=', a.keyId).where('endpoint', '=', 'float').execute();

describe(`a key's quota set while its float is open [${backendName}]`, () => {
  it('set to 0: the float gives its rest back at once, the next call is a 402, and the quota stays 0', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1, { quota: 0.5 });
    for (let i = 0; i < 3; i++) expect((await call(t, a, `busy ${i}`)).statusCode).toBe(200);
    expect((await floatRows(t, a)).length).toBeGreaterThan(0);

    const set = await setQuota(t, a, 0);
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ quota: 0 });
    const refused = await call(t, a, 'after the quota was set');
    expect(refused.statusCode).toBe(402);

    await t.ctx.textFloats.closeAll();
    const before = await spent(t, a);
    expect(await keyColumns(t, a)).toEqual({ remain: 0, used: before });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('set to a few calls’ worth: the key spends at most that from then on', async () => {
    const t = await app();
    const a = await seedAccount(t.ctx, 1, { quota: 0.5 });
    for (let i = 0; i < 3; i++) expect((await call(t, a, `warm ${i}`)).statusCode).toBe(200);
    const target = 3 * holdOf(t, 'spend 0');
    expect((await setQuota(t, a, target / 1_000_000)).json()).toMatchObject({ quota: target / 1_000_000 });
    const before = await spent(t, a);

    let served = 0;
    for (let i = 0; i < 20; i++) {
      const res = await call(t, a, `spend ${i}`);
      if (res.statusCode === 402) break;
      expect(res.statusCode).toBe(200);
      served++;
    }
    expect(served).toBeGreaterThanOrEqual(3);
    expect(served).toBeLessThan(20);
    await t.ctx.textFloats.closeAll();
    const after = (await spent(t, a)) - before;
    expect(after).toBeLessThanOrEqual(target);
    expect(await keyColumns(t, a)).toEqual({ remain: target - after, used: before + after });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('set by another process: this process’s float stops taking the key’s calls', async () => {
    const database = await freshDatabase();
    cleanups.push(() => database.drop());
    const serving = await app({}, database);
    const admin = await app({}, database);
    const a = await seedAccount(serving.ctx, 1, { quota: 0.5 });
    for (let i = 0; i < 3; i++) expect((await call(serving, a, `here ${i}`)).statusCode).toBe(200);
    expect((await floatRows(serving, a)).length).toBeGreaterThan(0);

    // Its calls' spends committed (they wait up to 10 ms for company): one still queued when another
    // process sets the quota lands after it, as an overrun of the new quota.
    await serving.ctx.textMoney.flush();
    expect((await setQuota(admin, a, 0)).json()).toMatchObject({ quota: 0 });
    // Redis announces the change at once; without it the key cache's poll (KEY_CACHE_POLL_MS) finds it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await call(serving, a, 'after')).statusCode).toBe(402);

    await serving.ctx.textFloats.closeAll();
    const total = await spent(serving, a);
    expect(await keyColumns(serving, a)).toEqual({ remain: 0, used: total });
    expect(await auditLedger(serving.ctx.db)).toEqual([]);
  });
});
