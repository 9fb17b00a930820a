import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// PATCH /admin/users/:id {status}: a disabled account's keys answer 401 on every surface, here and
// on another process of the same database, its console sessions end and it cannot sign in; enabled
// again, the same keys work.

let t: TestApp;
let other: GatewayProcess;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  t = await createTestApp();
  other = await startGateway({ ...t.database.env, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ADMIN_TOKEN, WORKERS: '0' });
}, 60_000);
afterAll(async () => {
  await stopAllGateways();
  await t?.close();
});

const patch = (id: string, payload: object) => t.app.inject({ method: 'PATCH', url: `/admin/users/${id}`, headers: adminHeaders, payload });
const balanceThere = async (key: string) => (await request(`${other.url}/v1/user/balance`, { headers: { authorization: `Bearer ${key}` } })).statusCode;
const message = (key: string) =>
  t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': key }, payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });

/** Polls the other process until its answer for the key is `status` (its key cache hears of the change). */
async function untilThere(key: string, status: number) {
  for (let i = 0; i < 60 && (await balanceThere(key)) !== status; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await balanceThere(key)).toBe(status);
}

describe(`an account the operator disables [${backendName}]`, () => {
  it('answers 401 on every key, here and on another process, ends its console sessions, and comes back when enabled', async () => {
    const account = await seedAccount(t.ctx, 5);
    const email = `${account.user.id.toLowerCase()}@example.com`;
    expect((await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } })).statusCode).toBe(200);
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
    expect(session.statusCode).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    expect((await message(account.key)).statusCode).toBe(200);
    await untilThere(account.key, 200);

    const disabled = await patch(account.user.id, { status: 'disabled' });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json()).toMatchObject({ id: account.user.id, status: 'disabled' });
    const refused = await message(account.key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(/account is disabled/) } });
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).statusCode).toBe(401);
    await untilThere(account.key, 401);
    expect((await t.app.inject({ method: 'GET', url: '/console/api/account', headers: { cookie } })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } })).statusCode).toBe(401);

    expect((await patch(account.user.id, { status: 'active' })).json()).toMatchObject({ status: 'active' });
    expect((await message(account.key)).statusCode).toBe(200);
    await untilThere(account.key, 200);
    expect((await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } })).statusCode).toBe(200);
  });

  it('a status other than active or disabled is a 400 and changes nothing; an unknown account is a 404', async () => {
    const account = await seedAccount(t.ctx, 1);
    const bad = await patch(account.user.id, { status: 'suspended', group: 'default' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/status/);
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).statusCode).toBe(200);
    expect((await patch('usr_nobody', { status: 'disabled' })).statusCode).toBe(404);
  });
});
