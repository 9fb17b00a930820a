import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { MESSAGES } from '../src/modules/balance/balance.service.ts';
import * as accounts from '../src/modules/accounts/accounts.service.ts';
import { backendName, createTestApp, seedAccount, type TestApp, awayFromRateWindowEdge } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  // Balance reads count against the key's read budget: at 1 a minute it is the key's own limit, so
  // a key's rate_limit_rpm shows the 429 of the key balance route.
  t = await createTestApp({ READ_RATE_LIMIT_RPM: '1' });
});
afterAll(() => t.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe(`key balance (GET /v1/balance) [${backendName}]`, () => {
  for (const path of ['/v1/balance', '/balance']) {
    it(`limited key: 200, body of 2.2, unlimited_quota false (${path})`, async () => {
      const account = await seedAccount(t.ctx, 20, { quota: 2.5 });
      const res = await get(path, account.auth);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        success: true,
        remain_balance: 2.5,
        remain_credits: 2500,
        used_balance: 0,
        used_credits: 0,
        unlimited_quota: false,
      });
    });

    it(`unlimited key: -1, -1, true (${path})`, async () => {
      const account = await seedAccount(t.ctx, 20, { unlimited: true });
      const res = await get(path, account.auth);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ success: true, remain_balance: -1, remain_credits: -1, unlimited_quota: true });
      expect(res.json()).toHaveProperty('used_balance', 0);
      expect(res.json()).toHaveProperty('used_credits', 0);
    });

    it(`deleted key: 200 {success:false, message} (${path})`, async () => {
      const account = await seedAccount(t.ctx, 5, { quota: 1 });
      await accounts.deleteKey(t.ctx, account.keyId);
      const res = await get(path, account.auth);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: false, message: MESSAGES.keyDeleted });
    });

    it(`key record not found: 200 {success:false, message} (${path})`, async () => {
      const account = await seedAccount(t.ctx, 5, { quota: 1 });
      // An old key: a key changed in the last seconds is re-read by the cache's next poll (it
      // re-reads a little of the past), and with its row gone that re-read would be a 401.
      await t.ctx.db.updateTable('api_keys').set({ updated_at: Date.now() - 600_000 }).where('id', '=', account.keyId).execute();
      // Warm the auth cache, then lose the row underneath it (an operator's manual clean-up).
      expect((await get(path, account.auth)).statusCode).toBe(200);
      await t.ctx.db.deleteFrom('ledger').where('key_id', '=', account.keyId).execute();
      await t.ctx.db.deleteFrom('api_keys').where('id', '=', account.keyId).execute();
      // Nothing told the balance snapshot; it is never more than a second old.
      let res = await get(path, account.auth);
      for (let i = 0; i < 30 && res.json().success; i++) {
        await new Promise((r) => setTimeout(r, 100));
        res = await get(path, account.auth);
      }
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: false, message: MESSAGES.keyNotFound });
    });

    it(`missing or bad credential: 401 authentication_error (${path})`, async () => {
      for (const headers of [{}, { authorization: 'Bearer sk-gw-nope' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
        const res = await get(path, headers);
        expect(res.statusCode).toBe(401);
        expect(res.json().error).toMatchObject({ code: 401, type: 'authentication_error' });
        expect(typeof res.json().error.message).toBe('string');
      }
    });

    it(`too many requests: 429 rate_limit_error (${path})`, async () => {
      await awayFromRateWindowEdge();
      const account = await seedAccount(t.ctx, 5, { quota: 1, rate_limit_rpm: 2 });
      expect((await get(path, account.auth)).statusCode).toBe(200);
      expect((await get(path, account.auth)).statusCode).toBe(200);
      const res = await get(path, account.auth);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual({ error: { code: 429, type: 'rate_limit_error', message: expect.any(String) } });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    });
  }

  it('reports balances in credits when BILLING_UNIT=credits', async () => {
    const credits = await createTestApp({ BILLING_UNIT: 'credits', CREDITS_PER_USD: '500' });
    try {
      const account = await seedAccount(credits.ctx, 1000, { quota: 250 });
      const res = await credits.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth });
      expect(res.json()).toMatchObject({ success: true, remain_balance: 250, remain_credits: 250 });
    } finally {
      await credits.close();
    }
  });
});

describe(`user balance (GET /v1/user/balance) [${backendName}]`, () => {
  for (const path of ['/v1/user/balance', '/user/balance']) {
    it(`success: 200, body of 2.3 without unlimited_quota (${path})`, async () => {
      const account = await seedAccount(t.ctx, 12.5, { quota: 1 });
      const res = await get(path, account.auth);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, remain_balance: 12.5, remain_credits: 12500, used_balance: 0, used_credits: 0 });
    });

    it(`401 and 429 as in 4.1 (${path})`, async () => {
      await awayFromRateWindowEdge();
      expect((await get(path)).statusCode).toBe(401);
      const account = await seedAccount(t.ctx, 1, { quota: 1, rate_limit_rpm: 1 });
      expect((await get(path, account.auth)).statusCode).toBe(200);
      const limited = await get(path, account.auth);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.type).toBe('rate_limit_error');
    });
  }

  // The two read failures are real failures of the storage: a column the read needs is gone.
  it('user quota read fails: 200 {success:false} with its own message', async () => {
    const own = await createTestApp();
    try {
      const account = await seedAccount(own.ctx, 3, { quota: 1 });
      await sql`alter table users rename column balance to balance_gone`.execute(own.ctx.db);
      const res = await own.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: false, message: MESSAGES.userQuotaFailed });
    } finally {
      await own.close();
    }
  });

  it('used quota read fails: 200 {success:false} with a different message', async () => {
    const own = await createTestApp();
    try {
      const account = await seedAccount(own.ctx, 3, { quota: 1 });
      await sql`alter table users rename column used to used_gone`.execute(own.ctx.db);
      const res = await own.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: false, message: MESSAGES.usedQuotaFailed });
      expect(MESSAGES.usedQuotaFailed).not.toBe(MESSAGES.userQuotaFailed);
    } finally {
      await own.close();
    }
  });
});

describe('CORS on the balance routes', () => {
  for (const path of ['/v1/balance', '/balance', '/v1/user/balance', '/user/balance']) {
    it(`preflight allows Authorization, and the GET carries the header (${path})`, async () => {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: path,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('GET');
      const account = await seedAccount(t.ctx, 1, { quota: 1 });
      const res = await get(path, { ...account.auth, origin: 'https://app.example' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(String(res.headers['access-control-expose-headers'])).toContain('x-request-id');
      // A caller that is not a browser (no Origin) is not sent the CORS headers; its answer is the same.
      const server = await get(path, account.auth);
      expect(server.statusCode).toBe(200);
      expect(server.json()).toEqual(res.json());
      expect(server.headers['access-control-allow-origin']).toBeUndefined();
      expect(server.headers['x-request-id']).toBeDefined();
    });
  }
});

describe(`the balance follows every charge at once [${backendName}]`, () => {
  it('a submit and its ending show in /v1/balance right after they commit', async () => {
    const w = await createTestApp({ SIMULATOR_LATENCY_MS: '50' }, undefined, { workers: true });
    try {
      const account = await seedAccount(w.ctx, 10, { quota: 1 });
      const read = async () => (await w.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth })).json();
      expect(await read()).toMatchObject({ remain_balance: 1, used_balance: 0 });
      const submit = await w.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'x [sim:fail]' } });
      expect(submit.statusCode).toBe(200);
      expect(await read()).toMatchObject({ remain_balance: 0.98, used_balance: 0.02 });
      const taskId = submit.json().data[0].task_id;
      for (let i = 0; i < 100; i++) {
        const task = (await w.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: account.auth })).json().data;
        if (task.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await read()).toMatchObject({ remain_balance: 1, used_balance: 0 });
    } finally {
      await w.close();
    }
  });
});
