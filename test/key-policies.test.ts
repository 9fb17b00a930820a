import { execFile } from 'node:child_process';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Key policies (issue 25): models, allowed_ips and expires_at on every
// endpoint family, refused before any hold, applied by every process within a second.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_RPM: '100000' });
});
afterAll(() => t.close());

type Headers = Record<string, string>;
interface Call {
  family: string;
  send(headers: Headers, remoteAddress?: string): Promise<LightMyRequestResponse>;
}

const post = (url: string, payload: object) => (headers: Headers, remoteAddress?: string) => t.app.inject({ method: 'POST', url, headers, payload, remoteAddress });
const CALLS: Call[] = [
  { family: 'images', send: post('/v1/images/generations', { model: 'imgart-5-0-pro', prompt: 'a cat' }) },
  { family: 'videos', send: post('/v1/videos/generations', { model: 'vidgen-2.0', prompt: 'a cat' }) },
  { family: 'avatars', send: post('/v1/seedance2/private-avatar', { group: { name: 'g' }, url: 'https://example.com/a.png', name: 'a' }) },
  { family: 'native', send: post('/v1beta/models/textgen-2.5-pro:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) },
  { family: 'messages', send: post('/v1/messages', { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }) },
  { family: 'chat-completions', send: post('/v1/chat/completions', { model: 'chatgen-4-haiku', messages: [{ role: 'user', content: 'hi' }] }) },
];
const BALANCE: Call = { family: 'balance', send: (headers, remoteAddress) => t.app.inject({ method: 'GET', url: '/v1/balance', headers, remoteAddress }) };

async function keyWith(policy: object) {
  const account = await seedAccount(t.ctx, 5);
  const res = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: policy });
  expect(res.statusCode, res.body).toBe(200);
  return account;
}

/** The error envelope of each family: standard, native (generateContent) and messages. */
function expectRefused(family: string, res: LightMyRequestResponse, status: number, message: RegExp) {
  expect(res.statusCode, `${family}: ${res.body}`).toBe(status);
  const error = res.json().error;
  expect(error.code).toBe(status);
  expect(error.message).toMatch(message);
  if (family === 'native') expect(error.status).toBe(status === 403 ? 'PERMISSION_DENIED' : 'UNAUTHENTICATED');
  else expect(error.type).toBe(status === 403 ? 'permission_error' : 'authentication_error');
  if (family === 'messages') expect(res.json().type).toBe('error');
}

async function spent(userId: string) {
  const user = await t.ctx.db.selectFrom('users').select(['balance', 'used']).where('id', '=', userId).executeTakeFirstOrThrow();
  const holds = await t.ctx.db.selectFrom('ledger').select('id').where('user_id', '=', userId).where('kind', '=', 'hold').execute();
  const tasks = await t.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', userId).execute();
  return { used: Number(user.used), holds: holds.length, tasks: tasks.length };
}

describe(`models [${backendName}]`, () => {
  it('a model outside the list is 403 on every family, before any hold; listed models and aliases pass; balance is not a model call', async () => {
    const account = await keyWith({ models: ['imggen-2-ext', 'textgen-2.5-flash', 'chatgen-4-sonnet'] });
    const key = (await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${account.user.id}`, headers: adminHeaders })).json().data[0];
    expect(key.models).toEqual(['imggen-2', 'textgen-2.5-flash', 'chatgen-4-sonnet']); // the alias stored as its id
    for (const call of CALLS) expectRefused(call.family, await call.send(account.auth), 403, /may not use the model/);
    // The images default model (imggen-2-official) is a model too.
    expectRefused('images', await post('/v1/images/generations', { prompt: 'a cat' })(account.auth), 403, /imggen-2-official/);
    expect(await spent(account.user.id)).toEqual({ used: 0, holds: 0, tasks: 0 });

    expect((await post('/v1/images/generations', { model: 'imggen-2-ext', prompt: 'a cat' })(account.auth)).statusCode).toBe(200);
    expect((await post('/v1/images/generations', { model: 'imggen-2', prompt: 'a cat' })(account.auth)).statusCode).toBe(200);
    expect((await post('/v1beta/models/textgen-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })(account.auth)).statusCode).toBe(200);
    const message = await post('/v1/messages', { model: 'chatgen-4-sonnet', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })({ 'x-api-key': account.key });
    expect(message.statusCode).toBe(200);
    expect((await post('/v1/chat/completions', { model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: 'hi' }] })(account.auth)).statusCode).toBe(200);
    expect((await BALANCE.send(account.auth)).json()).toMatchObject({ success: true });
  });

  it('GET /v1/models lists only the models the key may use; a model outside is 403 there too', async () => {
    const account = await keyWith({ models: ['imggen-2-ext', 'chatgen-4-sonnet'] });
    const listed = await t.app.inject({ method: 'GET', url: '/v1/models', headers: account.auth });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((m: { id: string }) => m.id).sort()).toEqual(['chatgen-4-sonnet', 'imggen-2']);
    expect((await t.app.inject({ method: 'GET', url: '/v1/models/chatgen-4-sonnet', headers: account.auth })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/models/vidgen-2.0', headers: account.auth })).statusCode).toBe(403);
    const all = await t.app.inject({ method: 'GET', url: '/v1/models', headers: (await seedAccount(t.ctx, 1)).auth });
    expect(all.json().data.length).toBeGreaterThan(10);
  });

  it('an empty list lifts the limit', async () => {
    const account = await keyWith({ models: ['imggen-2'] });
    expect((await CALLS[1]!.send(account.auth)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: { models: [] } })).json().models).toEqual([]);
    expect((await CALLS[1]!.send(account.auth)).statusCode).toBe(200);
  });
});

describe(`allowed_ips [${backendName}]`, () => {
  it('an address outside the list is 403 on every family and on balance; inside passes (IPv4 and IPv6)', async () => {
    const account = await keyWith({ allowed_ips: ['10.1.0.0/16', '2001:db8::/32'] });
    for (const call of [...CALLS, BALANCE]) {
      expectRefused(call.family, await call.send(account.auth, '10.2.0.1'), 403, /may not be used from 10\.2\.0\.1/);
      expectRefused(call.family, await call.send(account.auth, '2001:db9::1'), 403, /may not be used from/);
    }
    expect(await spent(account.user.id)).toEqual({ used: 0, holds: 0, tasks: 0 });
    for (const call of [...CALLS, BALANCE]) {
      expect((await call.send(account.auth, '10.1.200.7')).statusCode, call.family).not.toBe(403);
      expect((await call.send(account.auth, '2001:db8:1::5')).statusCode, call.family).not.toBe(403);
    }
    expect((await BALANCE.send(account.auth, '::ffff:10.1.2.3')).statusCode).toBe(200);
  });

  it('a bad CIDR is a 400 naming allowed_ips', async () => {
    const account = await seedAccount(t.ctx, 1);
    for (const bad of ['10.0.0.0/33', 'example.com', '1.2.3.4/8/1', '::1/129']) {
      const res = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: { allowed_ips: [bad] } });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.message).toContain('allowed_ips');
    }
  });

  it('behind a proxy (TRUST_PROXY) the X-Forwarded-For client is the address checked', async () => {
    const proxied = await createTestApp({ TRUST_PROXY: '127.0.0.1' });
    try {
      const account = await seedAccount(proxied.ctx, 1);
      await proxied.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: { allowed_ips: ['203.0.113.0/24'] } });
      const from = (client: string) => proxied.app.inject({ method: 'GET', url: '/v1/balance', headers: { ...account.auth, 'x-forwarded-for': client }, remoteAddress: '127.0.0.1' });
      expect((await from('203.0.113.9')).statusCode).toBe(200);
      expect((await from('198.51.100.9')).statusCode).toBe(403);
    } finally {
      await proxied.close();
    }
  });
});

describe(`expires_at [${backendName}]`, () => {
  it('an expired key is 401 saying it expired, on every family and on balance; a future expiry passes', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await keyWith({ expires_at: now - 5 });
    for (const call of [...CALLS, BALANCE]) expectRefused(call.family, await call.send(expired.auth), 401, /expired/);
    expect(await spent(expired.user.id)).toEqual({ used: 0, holds: 0, tasks: 0 });
    const later = await keyWith({ expires_at: now + 3600 });
    for (const call of [...CALLS, BALANCE]) expect((await call.send(later.auth)).statusCode, call.family).toBe(200);
    await t.app.inject({ method: 'PATCH', url: `/admin/keys/${expired.keyId}`, headers: adminHeaders, payload: { expires_at: null } });
    expect((await BALANCE.send(expired.auth)).statusCode).toBe(200);
  });
});

describe(`a policy change reaches another process within one second [${backendName}]`, () => {
  let other: GatewayProcess;
  beforeAll(async () => {
    other = await startGateway({ ...t.database.env, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ADMIN_TOKEN, WORKERS: '0', RATE_LIMIT_RPM: '100000' });
  }, 60_000);
  afterAll(() => stopAllGateways());

  it('models, allowed_ips and expires_at set here are applied there', async () => {
    const account = await seedAccount(t.ctx, 5);
    const submit = async () => (await request(`${other.url}/v1/videos/generations`, { method: 'POST', headers: { ...account.auth, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'vidgen-2.0', prompt: 'a cat' }) })).statusCode;
    const balance = async () => (await request(`${other.url}/v1/balance`, { headers: account.auth })).statusCode;
    expect(await submit()).toBe(200); // cached there now
    const refusedWithin = async (change: object, probe: () => Promise<number>, status: number) => {
      const res = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${account.keyId}`, headers: adminHeaders, payload: change });
      expect(res.statusCode).toBe(200);
      const changedAt = Date.now();
      let seen = await probe();
      while (seen !== status && Date.now() - changedAt < 1000) seen = await probe();
      expect(seen).toBe(status);
    };
    await refusedWithin({ models: ['imggen-2'] }, submit, 403);
    await refusedWithin({ models: [], allowed_ips: ['10.0.0.0/8'] }, balance, 403);
    await refusedWithin({ allowed_ips: [], expires_at: Math.floor(Date.now() / 1000) - 1 }, balance, 401);
    await refusedWithin({ expires_at: null }, balance, 200);
  });
});

describe(`account holders narrow their keys, never past the operator [${backendName}]`, () => {
  async function holder() {
    const account = await seedAccount(t.ctx, 5);
    const email = `${account.user.id.toLowerCase()}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'correct horse battery' }, remoteAddress: '10.9.9.9' });
    const headers = { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token as string };
    const patch = (payload: object, id = account.keyId) => t.app.inject({ method: 'PATCH', url: `/console/api/keys/${id}`, headers, payload });
    return { ...account, headers, patch };
  }

  it("inside the operator's models, ranges and expiry a change applies; outside it is a 403 naming the field", async () => {
    const h = await holder();
    const until = Math.floor(Date.now() / 1000) + 86_400;
    await t.app.inject({ method: 'PATCH', url: `/admin/keys/${h.keyId}`, headers: adminHeaders, payload: { models: ['imggen-2', 'vidgen-2.0'], allowed_ips: ['10.0.0.0/8'], expires_at: until } });
    const narrowed = await h.patch({ models: ['imggen-2-ext'], allowed_ips: ['10.1.0.0/16'], expires_at: until - 60 });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json()).toMatchObject({ models: ['imggen-2'], allowed_ips: ['10.1.0.0/16'], expires_at: until - 60, operator_policy: { models: ['imggen-2', 'vidgen-2.0'] } });
    // Back up to the operator's own limits is fine; past them is not.
    expect((await h.patch({ models: ['imggen-2', 'vidgen-2.0'] })).statusCode).toBe(200);
    for (const [field, payload] of [
      ['models', { models: ['imgart-5-0-pro'] }],
      ['models', { models: [] }],
      ['allowed_ips', { allowed_ips: ['11.0.0.0/8'] }],
      ['allowed_ips', { allowed_ips: ['10.0.0.0/7'] }],
      ['allowed_ips', { allowed_ips: [] }],
      ['expires_at', { expires_at: until + 1 }],
      ['expires_at', { expires_at: null }],
    ] as const) {
      const res = await h.patch(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(403);
      expect(res.json().error.message).toContain(field);
    }
    const key = (await t.app.inject({ method: 'GET', url: '/console/api/keys', headers: h.headers })).json().data[0];
    expect(key).toMatchObject({ models: ['imggen-2', 'vidgen-2.0'], allowed_ips: ['10.1.0.0/16'], expires_at: until - 60 });
  });

  it('a key the operator disabled stays disabled: the holder cannot enable it (403 naming status) until the operator does', async () => {
    const h = await holder();
    const call = () => post('/v1/images/generations', { model: 'imggen-2', prompt: 'a cat' })({ authorization: `Bearer ${h.key}` });
    const operator = (status: string) => t.app.inject({ method: 'PATCH', url: `/admin/keys/${h.keyId}`, headers: adminHeaders, payload: { status } });
    expect((await operator('disabled')).json().status).toBe('disabled');
    const refused = await h.patch({ status: 'active' });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().error.message).toContain('status');
    expect((await call()).statusCode).toBe(401);
    // Other changes of the holder still apply, and the operator's later changes keep the mark.
    expect((await h.patch({ log_bodies: true })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/keys/${h.keyId}`, headers: adminHeaders, payload: { models: ['imggen-2'] } })).statusCode).toBe(200);
    expect((await h.patch({ status: 'active' })).statusCode).toBe(403);
    // Enabled by the operator, the key is the holder's to disable and enable again.
    expect((await operator('active')).json().status).toBe('active');
    expect((await h.patch({ status: 'disabled' })).json().status).toBe('disabled');
    expect((await h.patch({ status: 'active' })).json().status).toBe('active');
    expect((await call()).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/console/api/keys', headers: h.headers })).json().data[0].operator_policy).toEqual({ models: ['imggen-2'], allowed_ips: [], expires_at: null });
  });

  it('a key the holder made has no ceiling: the holder sets and lifts its limits', async () => {
    const h = await holder();
    const made = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: h.headers, payload: { name: 'ci', unlimited: true, models: ['textgen-2.5-flash'] } });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ models: ['textgen-2.5-flash'], operator_policy: null });
    expect((await post('/v1/messages', { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })({ 'x-api-key': made.json().key })).statusCode).toBe(403);
    expect((await h.patch({ models: [] }, made.json().id)).json().models).toEqual([]);
  });

  it("a holder's new key may have a lower rate limit than RATE_LIMIT_RPM, never a higher one", async () => {
    const h = await holder();
    const limit = t.ctx.config.rateLimitRpm;
    const above = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: h.headers, payload: { name: 'fast', unlimited: true, rate_limit_rpm: limit + 1 } });
    expect(above.statusCode, above.body).toBe(403);
    expect(above.json().error).toMatchObject({ code: 403, message: expect.stringContaining('rate_limit_rpm') });
    const below = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: h.headers, payload: { name: 'slow', unlimited: true, rate_limit_rpm: 5 } });
    expect(below.statusCode, below.body).toBe(201);
    expect(below.json().rate_limit_rpm).toBe(5);
    // The operator may give a key more.
    const operator = await t.app.inject({ method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: below.json().user_id, unlimited: true, rate_limit_rpm: limit * 10 } });
    expect(operator.statusCode, operator.body).toBe(201);
  });
});

describe(`keys create/update from the command line [${backendName}]`, () => {
  const cli = (...args: string[]) =>
    new Promise<{ code: number; json: any }>((resolve) => {
      execFile(process.execPath, ['bin/gateway.js', ...args], { cwd: path.resolve(import.meta.dirname, '..'), env: { ...process.env, ...t.database.env, LOG_LEVEL: 'silent' } }, (err, stdout, stderr) => {
        const text = stdout.trim() || stderr.trim();
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, json });
      });
    });

  it('--models, --allowed-ips and --expires-at set the policy the API applies; a bad CIDR names the option', async () => {
    const user = (await seedAccount(t.ctx, 1)).user;
    const made = await cli('keys', 'create', '--user', user.id, '--unlimited', '--models', 'imggen-2-ext,vidgen-2.0', '--allowed-ips', '10.0.0.0/8', '--expires-at', '4102444800');
    expect(made.code, JSON.stringify(made.json)).toBe(0);
    expect(made.json).toMatchObject({ models: ['imggen-2', 'vidgen-2.0'], allowed_ips: ['10.0.0.0/8'], expires_at: 4102444800, operator_policy: { models: ['imggen-2', 'vidgen-2.0'] } });
    const auth = { authorization: `Bearer ${made.json.key}` };
    expect((await BALANCE.send(auth, '10.1.1.1')).statusCode).toBe(200);
    expect((await BALANCE.send(auth, '192.0.2.1')).statusCode).toBe(403);
    const lifted = await cli('keys', 'update', made.json.id, '--allowed-ips', '', '--expires-at', 'never');
    expect(lifted.json).toMatchObject({ models: ['imggen-2', 'vidgen-2.0'], allowed_ips: [], expires_at: null });
    const bad = await cli('keys', 'update', made.json.id, '--allowed-ips', '10.0.0.0/99');
    expect(bad.code).not.toBe(0);
    expect(JSON.stringify(bad.json)).toContain('allowed_ips');
  }, 60_000);
});
