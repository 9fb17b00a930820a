import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp, awayFromRateWindowEdge } from './harness.ts';

// The console's JSON routes: sign-in that reveals nothing, cookie sessions with a CSRF token, and an
// account holder who sees only their own account.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ CONSOLE_SIGNIN_RPM: '1000' });
});
afterAll(() => t.close());

const PASSWORD = 'correct horse battery';
const CONSOLE_SRC = path.resolve(import.meta.dirname, '../console/src');
const uniqueAddress = () => `10.${[1, 2, 3].map(() => randomBytes(1)[0]).join('.')}`;

async function holder(balance = 5) {
  const account = await seedAccount(t.ctx, balance);
  const email = `${account.user.id.toLowerCase()}@example.com`;
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  const session = await signIn(email, PASSWORD);
  expect(session.statusCode).toBe(200);
  const cookie = String(session.headers['set-cookie']).split(';')[0]!;
  return { ...account, email, cookie, csrf: session.json().csrf_token as string };
}

function signIn(email: string, password: string, remoteAddress = uniqueAddress()) {
  return t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password }, remoteAddress });
}

describe(`console sign-in [${backendName}]`, () => {
  it('sets an httpOnly, SameSite=Strict session cookie', async () => {
    const account = await seedAccount(t.ctx, 1);
    const email = `${account.user.id}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
    const res = await signIn(email.toUpperCase(), PASSWORD);
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toMatch(/^gw_console=[\w-]{40,}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+/);
    expect(res.json()).toEqual({ role: 'account', user_id: account.user.id, csrf_token: expect.any(String), billing_unit: 'usd', topups: null });
  });

  it('bad sign-ins are refused with one message, whether or not the email exists', async () => {
    const { email } = await holder();
    const wrongPassword = await signIn(email, 'wrong password!!');
    const unknownEmail = await signIn(`nobody-${randomBytes(4).toString('hex')}@example.com`, 'wrong password!!');
    for (const res of [wrongPassword, unknownEmail]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(wrongPassword.json()).toEqual(unknownEmail.json());
    expect(wrongPassword.json().error.message).toBe('Email or password is incorrect');
  });

  it('sign-in attempts are rate limited per client address (429 with Retry-After)', async () => {
    await awayFromRateWindowEdge();
    const limited = await createTestApp({ CONSOLE_SIGNIN_RPM: '3' });
    try {
      const remoteAddress = uniqueAddress();
      const statuses = [];
      for (let i = 0; i < 5; i++) {
        const email = `guess-${randomBytes(4).toString('hex')}@example.com`;
        const res = await limited.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'x' }, remoteAddress });
        statuses.push(res.statusCode);
        if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it('the operator signs in with the admin token; a wrong token is a 401', async () => {
    const wrong = await t.app.inject({ method: 'POST', url: '/console/api/session/operator', payload: { admin_token: 'nope' }, remoteAddress: uniqueAddress() });
    expect(wrong.statusCode).toBe(401);
    const ok = await t.app.inject({ method: 'POST', url: '/console/api/session/operator', payload: { admin_token: adminHeaders.authorization.slice(7) }, remoteAddress: uniqueAddress() });
    expect(ok.statusCode).toBe(200);
    const cookie = String(ok.headers['set-cookie']).split(';')[0]!;
    // The operator's session reaches the admin API; writes need the CSRF token.
    expect((await t.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie } })).statusCode).toBe(200);
    const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { cookie }, payload: { name: 'x' } });
    expect(noCsrf.statusCode).toBe(403);
    const withCsrf = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { cookie, 'x-csrf-token': ok.json().csrf_token }, payload: { name: 'x' } });
    expect(withCsrf.statusCode).toBe(201);
  });

  it("a new ADMIN_TOKEN ends the operator sessions the old one opened; the operator's sign-out ends its session", async () => {
    const ok = await t.app.inject({ method: 'POST', url: '/console/api/session/operator', payload: { admin_token: adminHeaders.authorization.slice(7) }, remoteAddress: uniqueAddress() });
    const cookie = String(ok.headers['set-cookie']).split(';')[0]!;
    const rotated = await createTestApp({ ADMIN_TOKEN: 'a-new-admin-token-after-a-leak-0123' }, t.database);
    try {
      expect((await t.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie } })).statusCode).toBe(200);
      const old = await rotated.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie } });
      expect(old.statusCode, old.body).toBe(401);
      expect((await rotated.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } })).statusCode).toBe(401);
      const fresh = await rotated.app.inject({ method: 'POST', url: '/console/api/session/operator', payload: { admin_token: 'a-new-admin-token-after-a-leak-0123' }, remoteAddress: uniqueAddress() });
      const freshCookie = String(fresh.headers['set-cookie']).split(';')[0]!;
      expect((await rotated.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie: freshCookie } })).statusCode).toBe(200);
      await rotated.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie: freshCookie, 'x-csrf-token': fresh.json().csrf_token } });
      expect((await rotated.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie: freshCookie } })).statusCode).toBe(401);
    } finally {
      await rotated.close();
    }
  });

  it("an account holder's session does not reach the admin API", async () => {
    const me = await holder();
    const res = await t.app.inject({ method: 'GET', url: '/admin/users', headers: { cookie: me.cookie } });
    expect(res.statusCode).toBe(403);
  });

  it('sign-out ends the session', async () => {
    const me = await holder();
    const out = await t.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie: me.cookie, 'x-csrf-token': me.csrf } });
    expect(out.headers['set-cookie']).toMatch(/Max-Age=0/);
    expect((await t.app.inject({ method: 'GET', url: '/console/api/account', headers: { cookie: me.cookie } })).statusCode).toBe(401);
  });

  it('sign-out without the CSRF header is refused as every other change is, and says so: the session lives on', async () => {
    const me = await holder();
    const out = await t.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie: me.cookie } });
    expect(out.statusCode, out.body).toBe(403);
    expect(out.json().error).toMatchObject({ code: 403, message: expect.stringContaining('x-csrf-token') });
    expect(out.headers['set-cookie']).toBeUndefined();
    expect((await t.app.inject({ method: 'GET', url: '/console/api/account', headers: { cookie: me.cookie } })).statusCode).toBe(200);
    // A session that has ended already is signed out without one: its cookie is cleared.
    const ended = await t.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie: 'gw_console=no-such-session' } });
    expect(ended.statusCode, ended.body).toBe(200);
    expect(ended.headers['set-cookie']).toMatch(/Max-Age=0/);
  });

  it('credentials: a short password or an email of another account is a 400', async () => {
    const a = await holder();
    const b = await seedAccount(t.ctx, 1);
    const put = (payload: object) => t.app.inject({ method: 'PUT', url: `/admin/users/${b.user.id}/console-credentials`, headers: adminHeaders, payload });
    expect((await put({ email: 'b@example.com', password: 'short' })).statusCode).toBe(400);
    expect((await put({ email: a.email, password: PASSWORD })).json().error.message).toContain('email');
  });
});

describe(`console account routes [${backendName}]`, () => {
  it('shows the balance numbers of GET /v1/user/balance', async () => {
    const me = await holder(7.5);
    const res = await t.app.inject({ method: 'GET', url: '/console/api/account', headers: { cookie: me.cookie } });
    expect(res.json()).toMatchObject({ id: me.user.id, email: me.email, remain_balance: 7.5, used_balance: 0 });
  });

  it('creates a key (secret once), disables it, deletes it; the API follows', async () => {
    const me = await holder();
    const write = { cookie: me.cookie, 'x-csrf-token': me.csrf };
    const created = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: write, payload: { name: 'ci', unlimited: true } });
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json();
    const balance = () => t.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer ${key}` } });
    expect((await balance()).json()).toMatchObject({ success: true });
    const listed = await t.app.inject({ method: 'GET', url: '/console/api/keys', headers: { cookie: me.cookie } });
    expect(JSON.stringify(listed.json())).not.toContain(key);
    await t.app.inject({ method: 'PATCH', url: `/console/api/keys/${id}`, headers: write, payload: { status: 'disabled' } });
    const disabled = await t.app.inject({ method: 'GET', url: '/user/balance', headers: { authorization: `Bearer ${key}` } });
    expect(disabled.statusCode).toBe(401);
    expect(disabled.json().error.message).toContain('disabled');
    expect((await t.app.inject({ method: 'DELETE', url: `/console/api/keys/${id}`, headers: write })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/user/balance', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(401);
  });

  it("another account's key is a 404, a key the operator disabled stays disabled (403); the API document lists both", async () => {
    const [me, other] = [await holder(), await holder()];
    const write = { cookie: me.cookie, 'x-csrf-token': me.csrf };
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: `/console/api/keys/${other.keyId}`, headers: write, ...(method === 'PATCH' ? { payload: { status: 'disabled' } } : {}) });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe(404);
    }
    expect((await t.app.inject({ method: 'PATCH', url: `/admin/keys/${me.keyId}`, headers: adminHeaders, payload: { status: 'disabled' } })).statusCode).toBe(200);
    const enable = await t.app.inject({ method: 'PATCH', url: `/console/api/keys/${me.keyId}`, headers: write, payload: { status: 'active' } });
    expect(enable.statusCode, enable.body).toBe(403);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/console/api/keys/{id}'].patch.responses)).toEqual(expect.arrayContaining(['200', '403', '404']));
    expect(Object.keys(doc.paths['/console/api/keys/{id}'].delete.responses)).toEqual(expect.arrayContaining(['200', '404']));
  });

  it('writes without the CSRF token are refused (403) and change nothing', async () => {
    const me = await holder();
    const res = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: { cookie: me.cookie }, payload: { name: 'csrf', unlimited: true } });
    expect(res.statusCode).toBe(403);
    const wrong = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: { cookie: me.cookie, 'x-csrf-token': 'x'.repeat(me.csrf.length) }, payload: { name: 'csrf', unlimited: true } });
    expect(wrong.statusCode).toBe(403);
    const keys = await t.app.inject({ method: 'GET', url: '/console/api/keys', headers: { cookie: me.cookie } });
    expect(keys.json().data.map((k: { name: string }) => k.name)).not.toContain('csrf');
  });

  it("a holder cannot see or touch another account's keys, tasks or usage", async () => {
    const alice = await holder(10);
    const bob = await holder(10);
    const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: bob.auth, payload: { model: 'imggen-2', prompt: 'a cat' } });
    expect(submit.statusCode).toBe(200);
    const bobTask = submit.json().data[0].task_id as string;
    const as = (who: typeof alice, method: string, url: string, payload?: object) =>
      t.app.inject({ method: method as 'GET', url, headers: { cookie: who.cookie, 'x-csrf-token': who.csrf }, payload });

    // Lists are scoped: Alice's lists hold nothing of Bob's.
    const aliceKeys = (await as(alice, 'GET', '/console/api/keys')).json().data;
    expect(aliceKeys.map((k: { id: string }) => k.id)).toEqual([alice.keyId]);
    expect((await as(alice, 'GET', '/console/api/tasks')).json().data).toEqual([]);
    expect((await as(alice, 'GET', '/console/api/usage')).json().data.every((u: { key_id: string }) => u.key_id === alice.keyId)).toBe(true);
    // Bob's own views do hold them.
    expect((await as(bob, 'GET', '/console/api/tasks')).json().data.map((x: { id: string }) => x.id)).toEqual([bobTask]);
    expect((await as(bob, 'GET', '/console/api/usage')).json().data).toMatchObject([{ key_id: bob.keyId, tasks: 1 }]);
    // Direct access by id is a 404, as if it did not exist, and changes nothing.
    expect((await as(alice, 'GET', `/console/api/tasks/${bobTask}/callbacks`)).statusCode).toBe(404);
    expect((await as(alice, 'PATCH', `/console/api/keys/${bob.keyId}`, { status: 'disabled' })).statusCode).toBe(404);
    expect((await as(alice, 'DELETE', `/console/api/keys/${bob.keyId}`)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/v1/balance', headers: bob.auth })).json()).toMatchObject({ success: true });
  });

  it('the signing secret is shown and rotated for the own account only', async () => {
    const me = await holder();
    const first = (await t.app.inject({ method: 'GET', url: '/console/api/webhook-secret', headers: { cookie: me.cookie } })).json().secret;
    expect(first).toMatch(/^whsec_/);
    const rotated = await t.app.inject({ method: 'POST', url: '/console/api/webhook-secret/rotate', headers: { cookie: me.cookie, 'x-csrf-token': me.csrf } });
    expect(rotated.json().secret).not.toBe(first);
    const admin = await t.app.inject({ method: 'GET', url: `/admin/users/${me.user.id}/webhook-secret`, headers: adminHeaders });
    expect(admin.json().secret).toBe(rotated.json().secret);
  });

  it('without a session every console route is a 401', async () => {
    for (const url of ['/console/api/account', '/console/api/keys', '/console/api/usage', '/console/api/tasks', '/console/api/webhook-secret']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().error.code).toBe(401);
    }
  });
});

describe(`operator totals and channel test [${backendName}]`, () => {
  it('GET /admin/stats counts requests, spend and outcomes per day', async () => {
    const account = await seedAccount(t.ctx, 10);
    const before = (await t.app.inject({ method: 'GET', url: '/admin/stats?days=7', headers: adminHeaders })).json().data;
    expect(before).toHaveLength(7);
    await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'a dog' } });
    const after = (await t.app.inject({ method: 'GET', url: '/admin/stats?days=7', headers: adminHeaders })).json().data;
    expect(after.at(-1).date).toBe(new Date().toISOString().slice(0, 10));
    expect(after.at(-1).requests).toBe(before.at(-1).requests + 1);
  });

  it('POST /admin/channels/:id/test makes one call through the simulator', async () => {
    const channels = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data;
    const res = await t.app.inject({ method: 'POST', url: `/admin/channels/${channels[0].id}/test`, headers: adminHeaders });
    expect(res.json()).toMatchObject({ ok: true, detail: expect.stringContaining('textgen') });
    const broken = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'dead', type: 'chat-completions', base_url: 'http://127.0.0.1:9', models: ['chatgen-4-haiku'] } });
    const failed = await t.app.inject({ method: 'POST', url: `/admin/channels/${broken.json().id}/test`, headers: adminHeaders });
    expect(failed.json()).toMatchObject({ ok: false });
    await t.app.inject({ method: 'DELETE', url: `/admin/channels/${broken.json().id}`, headers: adminHeaders });
  });
});

describe('behind a proxy', () => {
  it('with TRUST_PROXY the sign-in limit counts the X-Forwarded-For client, not the proxy', async () => {
    await awayFromRateWindowEdge();
    const proxied = await createTestApp({ CONSOLE_SIGNIN_RPM: '2', TRUST_PROXY: '127.0.0.1' });
    try {
      const attempt = (client: string) =>
        proxied.app.inject({
          method: 'POST',
          url: '/console/api/session',
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': client },
          payload: { email: `x-${randomBytes(4).toString('hex')}@example.com`, password: 'x' },
        });
      const first = uniqueAddress();
      expect([(await attempt(first)).statusCode, (await attempt(first)).statusCode, (await attempt(first)).statusCode]).toEqual([401, 401, 429]);
      // Another client behind the same proxy still gets its own attempts.
      expect((await attempt(uniqueAddress())).statusCode).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});

describe('the console uses only documented routes', () => {
  it('every route the front end calls is in /openapi.json', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const documented = new Set(Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    const calls = new Set<string>();
    const files = fs.readdirSync(CONSOLE_SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx') || f.endsWith('.ts'));
    for (const file of files) {
      const text = fs.readFileSync(path.join(CONSOLE_SRC, file), 'utf8');
      for (const [, method, raw] of text.matchAll(/api(?:<[^(]*>)?\('(GET|POST|PATCH|PUT|DELETE)', [`']([^`']+)[`']/g)) calls.add(`${method} ${raw}`);
      for (const [, raw] of text.matchAll(/useLoad<[^(]*>\([`']([^`']+)[`']\)/g)) calls.add(`GET ${raw}`);
    }
    expect(calls.size).toBeGreaterThan(20);
    for (const call of calls) {
      // `${anything}` in a path is a parameter; query strings are not part of the path.
      const template = call.split('?')[0]!.replace(/\$\{[^}]+\}/g, '{id}');
      expect(documented, call).toContain(template);
    }
  });
});
