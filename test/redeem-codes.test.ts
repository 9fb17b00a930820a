import { execFile } from 'node:child_process';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { REDEEM_REFUSALS_PER_MINUTE } from '../src/modules/codes/redeem.ts';
import { ADMIN_TOKEN, adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Redemption codes: an operator makes them, an account redeems one for its amount. A code credits
// an account once and at most `uses` accounts, however many redeem it at once on several processes.

let t: TestApp;
// A second gateway process on the same database, as on a cluster: half of each race goes to it.
let other: GatewayProcess;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0', CONSOLE_SIGNIN_RPM: '1000' });
  other = await startGateway({ ...t.database.env, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ADMIN_TOKEN, WORKERS: '0' });
}, 60_000);
afterAll(async () => {
  await stopAllGateways();
  await t.close();
});

const USD = 1_000_000;

async function makeCodes(body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { batch_id: string; codes: { id: string; code: string; uses: number }[] };
}

const redeemHere = (auth: Record<string, string>, code: string) =>
  t.app.inject({ method: 'POST', url: '/v1/redeem', headers: auth, payload: { code } }).then((res) => ({ status: res.statusCode, body: res.json() }));

async function redeemThere(auth: Record<string, string>, code: string) {
  const res = await request(`${other.url}/v1/redeem`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

const balanceOf = async (userId: string) => Number((await getUser(t.ctx.db, userId))!.balance);

async function creditsOf(codeId: string) {
  return t.ctx.db.selectFrom('ledger').select(['user_id', 'balance_delta', 'kind']).where('ref', '=', codeId).execute();
}

/** `accounts` accounts redeem `code` at once, alternately on this process and the other one. */
async function race(code: string, accounts: number) {
  const seeded = await Promise.all(Array.from({ length: accounts }, () => seedAccount(t.ctx, 0)));
  const answers = await Promise.all(seeded.map((a, i) => (i % 2 === 0 ? redeemHere(a.auth, code) : redeemThere(a.auth, code))));
  return { seeded, answers };
}

describe(`redemption codes [${backendName}]`, () => {
  it('makes a batch whose codes are shown once, lists their use but never a code, and revokes one', async () => {
    const made = await makeCodes({ amount: 2.5, count: 3, uses: 2, note: 'launch' });
    expect(made.codes).toHaveLength(3);
    for (const c of made.codes) {
      expect(c.code).toMatch(/^gw-[a-z2-7]{24}$/);
      expect(c).toMatchObject({ batch_id: made.batch_id, amount: 2.5, uses: 2, redeemed: 0, expires_at: null, revoked_at: null, note: 'launch' });
    }
    expect(new Set(made.codes.map((c) => c.code)).size).toBe(3);
    const listed = await t.app.inject({ method: 'GET', url: `/admin/codes?batch_id=${made.batch_id}`, headers: adminHeaders });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((c: { id: string }) => c.id).sort()).toEqual(made.codes.map((c) => c.id).sort());
    for (const c of made.codes) expect(listed.body).not.toContain(c.code);
    const rows = await t.ctx.db.selectFrom('redeem_codes').selectAll().where('batch_id', '=', made.batch_id).execute();
    for (const c of made.codes) expect(JSON.stringify(rows)).not.toContain(c.code.slice(3));

    const revoked = await t.app.inject({ method: 'DELETE', url: `/admin/codes/${made.codes[0]!.id}`, headers: adminHeaders });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/codes/code_nothing', headers: adminHeaders })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/admin/codes' })).statusCode).toBe(401);
    const refused = await t.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: { amount: 1, count: 1, not_a_field: 1 } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('not_a_field');
  });

  it('an account redeems a code once: the second time is refused and it was credited once', async () => {
    const [code] = (await makeCodes({ amount: 2, count: 1, uses: 5 })).codes;
    const account = await seedAccount(t.ctx, 1);
    const first = await redeemHere(account.auth, code!.code);
    expect(first).toEqual({ status: 200, body: { code_id: code!.id, amount: 2, amount_credits: expect.any(Number) } });
    const again = await redeemThere(account.auth, `  ${code!.code.toUpperCase()} `);
    expect(again).toEqual({ status: 403, body: { error: { code: 403, type: 'permission_error', message: expect.stringContaining('already redeemed') } } });
    expect(await balanceOf(account.user.id)).toBe(3 * USD);
    expect(await creditsOf(code!.id)).toEqual([{ user_id: account.user.id, balance_delta: 2 * USD, kind: 'topup' }]);
    // The same account, eight times at once on two processes: still one credit. (Eight, and one
    // refusal before: attempts in flight count against the refusals an account may make a minute.)
    const [multi] = (await makeCodes({ amount: 1, count: 1, uses: 10 })).codes;
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? redeemHere : redeemThere)(account.auth, multi!.code)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 403, 403, 403, 403, 403, 403, 403]);
    expect(await balanceOf(account.user.id)).toBe(4 * USD);
  });

  it('a single-use code raced by 30 accounts on two processes credits exactly one', async () => {
    const [code] = (await makeCodes({ amount: 1, count: 1 })).codes;
    const { seeded, answers } = await race(code!.code, 30);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((a) => a.status !== 200)) expect(a).toEqual({ status: 403, body: { error: { code: 403, type: 'permission_error', message: 'This code has been used up' } } });
    const credits = await creditsOf(code!.id);
    expect(credits).toHaveLength(1);
    const winner = seeded[answers.findIndex((a) => a.status === 200)]!;
    expect(credits[0]!.user_id).toBe(winner.user.id);
    expect(await balanceOf(winner.user.id)).toBe(USD);
  });

  it('a three-use code raced by 30 accounts on two processes credits exactly three', async () => {
    const [code] = (await makeCodes({ amount: 1, count: 1, uses: 3 })).codes;
    const { seeded, answers } = await race(code!.code, 30);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(27);
    const credits = await creditsOf(code!.id);
    expect(credits).toHaveLength(3);
    const winners = seeded.filter((_, i) => answers[i]!.status === 200).map((a) => a.user.id).sort();
    expect(credits.map((c) => c.user_id).sort()).toEqual(winners);
    const listed = (await t.app.inject({ method: 'GET', url: '/admin/codes', headers: adminHeaders })).json().data;
    expect(listed.find((c: { id: string }) => c.id === code!.id)).toMatchObject({ uses: 3, redeemed: 3 });
  });

  it('expired, revoked and unknown codes are refused and credit nothing', async () => {
    const account = await seedAccount(t.ctx, 0);
    const [expiring, revoking] = (await makeCodes({ amount: 1, count: 2, expires_at: Math.floor(Date.now() / 1000) + 3600 })).codes;
    await t.ctx.db.updateTable('redeem_codes').set({ expires_at: Date.now() - 1000 }).where('id', '=', expiring!.id).execute();
    expect(await redeemHere(account.auth, expiring!.code)).toEqual({ status: 403, body: { error: { code: 403, type: 'permission_error', message: 'This code has expired' } } });
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/codes/${revoking!.id}`, headers: adminHeaders })).statusCode).toBe(200);
    expect(await redeemThere(account.auth, revoking!.code)).toEqual({ status: 403, body: { error: { code: 403, type: 'permission_error', message: 'This code has been revoked' } } });
    expect(await redeemHere(account.auth, 'gw-nothing')).toEqual({ status: 404, body: { error: { code: 404, type: 'not_found_error', message: 'No such code' } } });
    expect(await balanceOf(account.user.id)).toBe(0);
    expect(await t.ctx.db.selectFrom('redemptions').selectAll().where('user_id', '=', account.user.id).execute()).toEqual([]);
    const past = await t.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: { amount: 1, count: 1, expires_at: 1 } });
    expect(past.statusCode).toBe(400);
  });

  it('guessing codes meets a 429 after a few refusals a minute, even for a right code; successes are not counted', async () => {
    await awayFromRateWindowEdge();
    const account = await seedAccount(t.ctx, 0);
    const codes = (await makeCodes({ amount: 1, count: REDEEM_REFUSALS_PER_MINUTE + 2 })).codes;
    // Successes first, more than the limit: they use none of it.
    for (const c of codes.slice(0, REDEEM_REFUSALS_PER_MINUTE + 1)) expect((await redeemHere(account.auth, c.code)).status).toBe(200);
    for (let i = 0; i < REDEEM_REFUSALS_PER_MINUTE; i++) expect((await redeemHere(account.auth, `gw-guess${i}`)).status).toBe(404);
    const limited = await t.app.inject({ method: 'POST', url: '/v1/redeem', headers: account.auth, payload: { code: codes.at(-1)!.code } });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 429, type: 'rate_limit_error' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The other process counts for the same account (with Redis, or on its own otherwise).
    if (process.env.REDIS_URL) expect((await redeemThere(account.auth, 'gw-guess-there')).status).toBe(429);
    expect(await balanceOf(account.user.id)).toBe((REDEEM_REFUSALS_PER_MINUTE + 1) * USD);
  });

  it('the console redeems for the signed-in account (CSRF header required)', async () => {
    const account = await seedAccount(t.ctx, 0);
    const email = `${account.user.id.toLowerCase()}@example.com`;
    const password = 'correct horse battery';
    expect((await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password } })).statusCode).toBe(200);
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password } });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const [code] = (await makeCodes({ amount: 3, count: 1 })).codes;
    const noCsrf = await t.app.inject({ method: 'POST', url: '/console/api/redeem', headers: { cookie }, payload: { code: code!.code } });
    expect(noCsrf.statusCode).toBe(403);
    const headers = { cookie, 'x-csrf-token': session.json().csrf_token as string };
    const res = await t.app.inject({ method: 'POST', url: '/console/api/redeem', headers, payload: { code: code!.code } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ code_id: code!.id, amount: 3 });
    expect((await t.app.inject({ method: 'POST', url: '/console/api/redeem', headers, payload: { code: code!.code } })).statusCode).toBe(403);
    expect(await balanceOf(account.user.id)).toBe(3 * USD);
  });

  it('the gateway command makes, lists and revokes codes, printing JSON', async () => {
    const root = path.resolve(import.meta.dirname, '..');
    const gateway = (...args: string[]) =>
      new Promise<{ code: number; json: any }>((resolve) => {
        execFile(process.execPath, ['bin/gateway.js', ...args], { cwd: root, env: { ...process.env, ...t.database.env, LOG_LEVEL: 'silent' } }, (err, stdout, stderr) =>
          resolve({ code: err ? 1 : 0, json: JSON.parse(stdout.trim() || stderr.trim()) }),
        );
      });
    const made = await gateway('codes', 'create', '--amount', '1.5', '--count', '2', '--uses', '3', '--note', 'cli');
    expect(made.code).toBe(0);
    expect(made.json.codes).toHaveLength(2);
    expect(made.json.codes[0]).toMatchObject({ amount: 1.5, uses: 3, redeemed: 0, note: 'cli', code: expect.stringMatching(/^gw-/) });
    const listed = await gateway('codes', 'list', '--batch', made.json.batch_id);
    expect(listed.json.map((c: { id: string }) => c.id).sort()).toEqual(made.json.codes.map((c: { id: string }) => c.id).sort());
    expect(JSON.stringify(listed.json)).not.toContain(made.json.codes[0].code);
    const revoked = await gateway('codes', 'revoke', made.json.codes[0].id);
    expect(revoked.json.revoked_at).toBeGreaterThan(0);
    const account = await seedAccount(t.ctx, 0);
    expect((await redeemHere(account.auth, made.json.codes[0].code)).status).toBe(403);
    expect((await redeemHere(account.auth, made.json.codes[1].code)).status).toBe(200);
    const refused = await gateway('codes', 'create', '--amount', '1', '--count', '0');
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 400, message: expect.stringContaining('--count') });
  }, 60_000);

  it('the ledger audit balances', async () => {
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});

describe(`redemption codes with BILLING_UNIT=credits [${backendName}]`, () => {
  it('a code of 2010 credits reads 2010 everywhere (made, listed, redeemed, the balance), not 2009.9999999999998; 2032.053 reads 2032.053', async () => {
    const credits = await createTestApp({ WORKERS: '0', BILLING_UNIT: 'credits', CREDITS_PER_USD: '1000' });
    try {
      const made = await credits.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: { amount: 2010, count: 1 } });
      expect(made.statusCode, made.body).toBe(201);
      const [code] = made.json().codes;
      expect(code.amount).toBe(2010);
      const listed = await credits.app.inject({ method: 'GET', url: `/admin/codes?batch_id=${made.json().batch_id}`, headers: adminHeaders });
      expect(listed.json().data[0].amount).toBe(2010);
      const account = await seedAccount(credits.ctx, 0);
      const redeemed = await credits.app.inject({ method: 'POST', url: '/v1/redeem', headers: account.auth, payload: { code: code.code } });
      expect(redeemed.json()).toEqual({ code_id: code.id, amount: 2010, amount_credits: 2010 });
      const balance = await credits.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
      expect(balance.json()).toMatchObject({ remain_balance: 2010, remain_credits: 2010 });
      // Not whole either: 2,032,053 units read 2032.053 credits, not 2032.0529999999999.
      const odd = await credits.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: { amount: 2032.053, count: 1 } });
      expect(odd.json().codes[0].amount).toBe(2032.053);
      const again = await credits.app.inject({ method: 'POST', url: '/v1/redeem', headers: account.auth, payload: { code: odd.json().codes[0].code } });
      expect(again.json()).toMatchObject({ amount: 2032.053, amount_credits: 2032 });
      const after = await credits.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
      expect(after.json()).toMatchObject({ remain_balance: 4042.053, remain_credits: 4042 });
    } finally {
      await credits.close();
    }
  });
});
