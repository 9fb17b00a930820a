import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { MAX_BALANCE_UNITS } from '../src/lib/money.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// No balance or quota may hold more than MAX_BALANCE_UNITS (USD 1,000,000,000): above it a double
// no longer holds every ledger sum exactly. An amount above it is refused as sent; a credit that
// would take a balance or quota above it is refused by the crediting UPDATE itself, so the ledger
// and the balances always agree.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: adminHeaders, payload });
const audit = async () => (await t.app.inject({ method: 'GET', url: '/admin/ledger/audit', headers: adminHeaders })).json();

describe(`balance maximum [${backendName}]`, () => {
  it('the whale: an amount above the maximum, or a top-up past it, is a 400 naming the field and the maximum; the ledger stays balanced', async () => {
    const above = await post('/admin/users', { name: 'whale', balance: 9_000_000_000 });
    expect(above.statusCode).toBe(400);
    expect(above.json().error.message).toBe('balance must be at most 1000000000, the most a balance or quota may hold');
    // What docs/api.md once promised: refused with the maximum, not as a "non-negative amount".
    const trillion = await post('/admin/users', { name: 'whale', balance: 1e12 });
    expect(trillion.json().error.message).toContain('at most 1000000000');

    const whale = await post('/admin/users', { name: 'whale', balance: 900_000_000 });
    expect(whale.statusCode, whale.body).toBe(201);
    const id = whale.json().id;
    const past = await post(`/admin/users/${id}/topup`, { amount: 100_000_001 });
    expect(past.statusCode).toBe(400);
    expect(past.json().error).toMatchObject({ type: 'invalid_request_error', message: 'amount: the balance would go above its maximum of 1000000000' });
    expect((await post(`/admin/users/${id}/topup`, { amount: 99_999_999.999997 })).statusCode).toBe(200);
    const small = await Promise.all([1, 2, 3, 4].map(() => post(`/admin/users/${id}/topup`, { amount: 0.000001 })));
    // Parallel credits cannot pass the maximum together: exactly the three units left were credited.
    expect(small.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 400]);
    expect((await getUser(t.ctx.db, id))!.balance).toBe(MAX_BALANCE_UNITS);
    expect(await audit()).toEqual({ balanced: true, mismatches: [] });
  });

  it("a key's quota: above the maximum is refused when created and when changed", async () => {
    const account = await seedAccount(t.ctx, 1);
    const created = await post('/admin/keys', { user_id: account.user.id, quota: 1_000_000_001 });
    expect(created.statusCode).toBe(400);
    expect(created.json().error.message).toBe('quota must be at most 1000000000, the most a balance or quota may hold');
    const key = await post('/admin/keys', { user_id: account.user.id, quota: 1_000_000_000 });
    expect(key.statusCode, key.body).toBe(201);
    const raised = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${key.json().id}`, headers: adminHeaders, payload: { quota: 2e9 } });
    expect(raised.statusCode).toBe(400);
    expect(raised.json().error.message).toContain('quota must be at most 1000000000');
    expect((await getKey(t.ctx.db, key.json().id))!.quota_remain).toBe(MAX_BALANCE_UNITS);
    expect(await audit()).toEqual({ balanced: true, mismatches: [] });
  });

  it('a redemption code that would take the balance above the maximum is refused whole, its use not taken', async () => {
    const account = await seedAccount(t.ctx, 999_999_999);
    const codes = await post('/admin/codes', { amount: 2, count: 1 });
    expect(codes.statusCode, codes.body).toBe(201);
    const { id, code } = codes.json().codes[0];
    const redeemed = await t.app.inject({ method: 'POST', url: '/v1/redeem', headers: account.auth, payload: { code } });
    expect(redeemed.statusCode).toBe(400);
    expect(redeemed.json().error.message).toBe('code: the balance would go above its maximum of 1000000000');
    const listed = (await t.app.inject({ method: 'GET', url: '/admin/codes', headers: adminHeaders })).json().data;
    expect(listed.find((c: { id: string }) => c.id === id)).toMatchObject({ redeemed: 0 });
    expect(await audit()).toEqual({ balanced: true, mismatches: [] });
  });
});
