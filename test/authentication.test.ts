import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as accounts from '../src/modules/accounts/accounts.service.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp, awayFromRateWindowEdge } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_RPM: '3' });
});
afterAll(() => t.close());

const balance = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/user/balance', headers });

describe(`authentication [${backendName}]`, () => {
  it('Bearer works; a missing Authorization header is 401 authentication_error', async () => {
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    expect((await balance(account.auth)).statusCode).toBe(200);
    const missing = await balance({});
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toMatchObject({ code: 401, type: 'authentication_error' });
  });

  it('x-api-key is not accepted outside /v1/messages', async () => {
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    expect((await balance({ 'x-api-key': account.key })).statusCode).toBe(401);
  });

  it('/v1/messages takes x-api-key (and Bearer); its errors carry "type":"error"', async () => {
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    const payload = { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    const viaHeader = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload });
    expect(viaHeader.statusCode).toBe(200);
    expect(viaHeader.json().type).toBe('message');
    const viaBearer = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: account.auth, payload });
    expect(viaBearer.statusCode).toBe(200);
    const missing = await t.app.inject({ method: 'POST', url: '/v1/messages', payload });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ type: 'error', error: { code: 401, type: 'authentication_error', message: expect.stringContaining('x-api-key') } });
  });

  it('a disabled key and a deleted key are refused', async () => {
    const disabled = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    expect((await balance(disabled.auth)).statusCode).toBe(200);
    await accounts.changeKey(t.ctx, disabled.keyId, { status: 'disabled' });
    expect((await balance(disabled.auth)).statusCode).toBe(401);
    await accounts.changeKey(t.ctx, disabled.keyId, { status: 'active' });
    expect((await balance(disabled.auth)).statusCode).toBe(200);
    const deleted = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    await accounts.deleteKey(t.ctx, deleted.keyId);
    expect((await balance(deleted.auth)).statusCode).toBe(401);
  });

  it('keys are stored only as a SHA-256 hash and a display prefix', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: (await seedAccount(t.ctx, 1)).user.id, quota: 1 } });
    expect(created.statusCode).toBe(201);
    const { key, id, prefix } = created.json();
    expect(key.startsWith(prefix)).toBe(true);
    const row = await t.ctx.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    const list = await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${row.user_id}`, headers: adminHeaders });
    expect(list.body).not.toContain(key);
    expect((await balance({ authorization: `Bearer ${key}` })).statusCode).toBe(200);
  });

  it('the admin API wants its token, compared exactly', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/admin/users' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/admin/users', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/admin/users', headers: adminHeaders })).statusCode).toBe(200);
    const closed = await createTestApp({ ADMIN_TOKEN: '' });
    try {
      const res = await closed.app.inject({ method: 'GET', url: '/admin/users', headers: adminHeaders });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.type).toBe('permission_error');
    } finally {
      await closed.close();
    }
  });
});

describe(`rate limits [${backendName}]`, () => {
  // Calls that spend are limited by RATE_LIMIT_RPM; reads have their own budget (read-limits.test.ts).
  // A submit the schema refuses is counted first: nothing is generated.
  const spend = (auth: Record<string, string>) => t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 42 } });

  it('RATE_LIMIT_RPM applies by default; 429 carries Retry-After and RateLimit-* headers', async () => {
    await awayFromRateWindowEdge();
    const account = await seedAccount(t.ctx, 1, { unlimited: true });
    const first = await spend(account.auth);
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThan(0);
    await spend(account.auth);
    await spend(account.auth);
    const limited = await spend(account.auth);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 429, type: 'rate_limit_error' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it("a key's rate_limit_rpm overrides the default; limits are per key", async () => {
    await awayFromRateWindowEdge();
    const roomy = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 10 });
    for (let i = 0; i < 10; i++) expect((await spend(roomy.auth)).statusCode).toBe(400);
    expect((await spend(roomy.auth)).statusCode).toBe(429);
    const other = await seedAccount(t.ctx, 1, { unlimited: true });
    expect((await spend(other.auth)).statusCode).toBe(400);
  });
});
