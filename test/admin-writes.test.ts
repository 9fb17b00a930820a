import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKey } from '../src/modules/accounts/keys.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { getChannel } from '../src/modules/channels/channels.repo.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Issue 20, items 4 and 5: admin and console writes take only their documented fields, and a key's
// quota change applies however busy the key is.

let t: TestApp;
beforeAll(async () => {
  // No workers: submits stay held, so a key's spend is exactly its holds.
  t = await createTestApp({ WORKERS: '0', CONSOLE_SIGNIN_RPM: '1000' });
});
afterAll(() => t.close());

const PASSWORD = 'correct horse battery';
const admin = (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: unknown) => t.app.inject({ method, url, headers: adminHeaders, payload: payload as object });
const submit = (auth: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ prompt: 'x' }) });

async function consoleSession(userId: string) {
  const email = `${userId.toLowerCase()}@example.com`;
  expect((await admin('PUT', `/admin/users/${userId}/console-credentials`, { email, password: PASSWORD })).statusCode).toBe(200);
  const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
  return { email, cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token as string };
}

async function newChannel() {
  const res = await admin('POST', '/admin/channels', { name: 'spare', type: 'simulator', models: ['no-such-model'], status: 'disabled' });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

function expectRefusedNaming(res: { statusCode: number; json(): any }, field: string) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ error: { code: 400, type: 'invalid_request_error', message: expect.stringContaining(field) } });
}

describe(`admin and console writes take only their documented fields [${backendName}]`, () => {
  it('an unknown field is a 400 naming it, on every admin and console write', async () => {
    const account = await seedAccount(t.ctx, 5, { quota: 1 });
    const channelId = await newChannel();
    const { email, ...session } = await consoleSession(account.user.id);
    const prices = (await t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders })).json();
    const junk = { not_a_field: 1 };
    const writes: [string, string, Record<string, string>, object][] = [
      ['POST', '/admin/users', adminHeaders, { name: 'x' }],
      ['POST', `/admin/users/${account.user.id}/topup`, adminHeaders, { amount: 1 }],
      ['POST', '/admin/keys', adminHeaders, { user_id: account.user.id, quota: 1 }],
      ['PATCH', `/admin/keys/${account.keyId}`, adminHeaders, {}],
      ['PUT', `/admin/users/${account.user.id}/console-credentials`, adminHeaders, { email, password: PASSWORD }],
      ['PUT', '/admin/prices', adminHeaders, { models: prices.models }],
      ['POST', '/admin/channels', adminHeaders, { name: 'x', type: 'simulator', models: ['x'] }],
      ['PATCH', `/admin/channels/${channelId}`, adminHeaders, {}],
      ['POST', '/console/api/keys', session, { name: 'x', quota: 1 }],
      ['PATCH', `/console/api/keys/${account.keyId}`, session, { status: 'disabled' }],
      ['POST', '/console/api/session', {}, { email, password: PASSWORD }],
      ['POST', '/console/api/session/operator', {}, { admin_token: adminHeaders.authorization.slice(7) }],
    ];
    for (const [method, url, headers, body] of writes) {
      const res = await t.app.inject({ method: method as 'POST', url, headers, payload: { ...body, ...junk } });
      expect.soft(res.statusCode, `${method} ${url}`).toBe(400);
      expectRefusedNaming(res, 'not_a_field');
    }
    // Nothing of those writes happened.
    expect((await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${account.user.id}`, headers: adminHeaders })).json().data).toHaveLength(1);
    expect((await getKey(t.ctx.db, account.keyId))!.status).toBe('active');
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('an id in the path that names nothing is a 404 not_found_error on every admin route that takes one', async () => {
    const routes: [string, string, object | undefined][] = [
      ['POST', '/admin/users/usr_nope/topup', { amount: 1 }],
      ['PATCH', '/admin/users/usr_nope', { alert_below: 1 }],
      ['PUT', '/admin/users/usr_nope/console-credentials', { email: 'nobody@example.com', password: PASSWORD }],
      ['GET', '/admin/users/usr_nope/webhook-secret', undefined],
      ['POST', '/admin/users/usr_nope/webhook-secret/rotate', undefined],
      ['PATCH', '/admin/keys/key_nope', { name: 'x' }],
      ['DELETE', '/admin/keys/key_nope', undefined],
      ['PATCH', '/admin/channels/ch_nope', { name: 'x' }],
      ['DELETE', '/admin/channels/ch_nope', undefined],
      ['POST', '/admin/channels/ch_nope/test', undefined],
      ['GET', '/admin/calls/nope', undefined],
      ['GET', '/admin/calls/nope/bodies', undefined],
      ['GET', '/admin/tasks/task_nope/deliveries', undefined],
      ['POST', '/admin/tasks/task_nope/redeliver', undefined],
      ['DELETE', '/admin/codes/code_nope', undefined],
      ['DELETE', '/admin/invites/inv_nope', undefined],
    ];
    for (const [method, url, payload] of routes) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: adminHeaders, ...(payload ? { payload } : {}) });
      expect.soft(res.statusCode, `${method} ${url}: ${res.body}`).toBe(404);
      expect.soft(res.json().error, `${method} ${url}`).toMatchObject({ code: 404, type: 'not_found_error' });
    }
  });

  it('PATCH /admin/keys/:id cannot write a column it does not document: no free quota, no moved key', async () => {
    const account = await seedAccount(t.ctx, 5, { quota: 1 });
    const other = await seedAccount(t.ctx, 5);
    const before = await getKey(t.ctx.db, account.keyId);
    for (const body of [
      { quota_remain: 5_000_000_000 },
      { quota_used: 0 },
      { user_id: other.user.id },
      { key_hash: 'x' },
      { key_prefix: 'x' },
      { unlimited: true },
      { deleted_at: 1 },
      { id: 'key_taken' },
      { name: 'ok', updated_at: 1 },
    ]) {
      expectRefusedNaming(await admin('PATCH', `/admin/keys/${account.keyId}`, body), Object.keys(body).at(-1)!);
    }
    expectRefusedNaming(await admin('PATCH', `/admin/keys/${account.keyId}`, { status: 'deleted' }), 'status');
    expect(await getKey(t.ctx.db, account.keyId)).toEqual(before);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('PATCH /admin/channels/:id cannot write a column it does not document', async () => {
    const channelId = await newChannel();
    const before = await getChannel(t.ctx.db, channelId);
    for (const body of [{ id: 'ch_taken' }, { created_at: 1 }, { updated_at: 1 }, { has_secret: false }, { models: ['a'], secret_hash: 'x' }]) {
      expectRefusedNaming(await admin('PATCH', `/admin/channels/${channelId}`, body), Object.keys(body).at(-1)!);
    }
    expect(await getChannel(t.ctx.db, channelId)).toEqual(before);
    const renamed = await admin('PATCH', `/admin/channels/${channelId}`, { name: 'renamed', weight: 3 });
    expect(renamed.json()).toMatchObject({ id: channelId, name: 'renamed', weight: 3, status: 'disabled', type: 'simulator' });
  });

  it('a quota change is a ledger row: lowering to 0 leaves nothing to spend, raising adds, the audit balances', async () => {
    const account = await seedAccount(t.ctx, 5, { quota: 1 });
    for (let i = 0; i < 3; i++) expect((await submit(account.auth)).statusCode).toBe(200);
    const patch = (quota: number) => admin('PATCH', `/admin/keys/${account.keyId}`, { quota });
    expect((await patch(0.5)).json()).toMatchObject({ quota: 0.5, quota_used: 0.033 });
    expect((await patch(0)).json()).toMatchObject({ quota: 0, quota_used: 0.033 });
    expect((await submit(account.auth)).statusCode).toBe(402);
    expect((await patch(2)).json()).toMatchObject({ quota: 2, quota_used: 0.033 });
    expect((await submit(account.auth)).statusCode).toBe(200);
    const rows = await t.ctx.db.selectFrom('ledger').select(['key_remain_delta', 'balance_delta']).where('key_id', '=', account.keyId).where('kind', '=', 'key_quota').orderBy('id').execute();
    expect(rows).toEqual([
      { key_remain_delta: 1_000_000, balance_delta: 0 },
      { key_remain_delta: -467_000, balance_delta: 0 },
      { key_remain_delta: -500_000, balance_delta: 0 },
      { key_remain_delta: 2_000_000, balance_delta: 0 },
    ]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});

describe(`lowering a busy key's quota [${backendName}]`, () => {
  // The operator's PATCH goes to a second gateway process on the same database, as on a cluster:
  // this process's submits then commit between any two statements of it, on SQLite too.
  let operator: GatewayProcess;
  beforeAll(async () => {
    operator = await startGateway({ ...t.database.env, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ADMIN_TOKEN, WORKERS: '0' });
  }, 60_000);
  afterAll(() => stopAllGateways());

  it('PATCH quota 0.1 during parallel submits always answers 200 and limits what is spent after it', async () => {
    const ids: string[] = [];
    const setQuota = async (keyId: string) => {
      const res = await request(`${operator.url}/admin/keys/${keyId}`, {
        method: 'PATCH',
        headers: { ...adminHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ quota: 0.1 }),
      });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    for (let round = 0; round < 5; round++) {
      const account = await seedAccount(t.ctx, 100, { quota: 1 });
      ids.push(account.user.id, account.keyId);
      // Twenty callers submitting back to back; the operator sets the quota five times meanwhile,
      // the first at a different point of the burst each round.
      let stop = false;
      const callers = Array.from({ length: 20 }, async () => {
        const codes: number[] = [];
        while (!stop) codes.push((await submit(account.auth)).statusCode);
        return codes;
      });
      await new Promise((resolve) => setTimeout(resolve, round * 5));
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await setQuota(account.keyId));
      stop = true;
      const codes = (await Promise.all(callers)).flat();
      expect(answers.filter((a) => a.status !== 200), `round ${round}`).toEqual([]);
      // Each answer is the key as its change left it, before any later submit took from it.
      expect(answers.map((a) => a.body.quota)).toEqual([0.1, 0.1, 0.1, 0.1, 0.1]);
      expect(codes.filter((c) => c !== 200 && c !== 402)).toEqual([]);
      expect(codes.filter((c) => c === 200).length).toBeGreaterThan(0);
      const after = (await getKey(t.ctx.db, account.keyId))!;
      expect(after.quota_remain).toBeGreaterThanOrEqual(0);
      // What was paid after the last change came out of its 0.1, and nothing else was added.
      expect(after.quota_remain + after.quota_used).toBe(100_000 + Math.round(answers.at(-1)!.body.quota_used * 1_000_000));
    }
    expect((await auditLedger(t.ctx.db)).filter((m) => ids.includes(m.id))).toEqual([]);
  }, 120_000);
});
