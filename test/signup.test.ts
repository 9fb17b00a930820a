import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { linkToken, startSmtpSink, type SmtpSink } from './support/smtp-sink.ts';

// Customers open their own accounts: the mails reach a real SMTP server, the whole path (sign up,
// confirm, sign in, make a key, make a call paid by SIGNUP_CREDIT) runs over HTTP on a real port.

const PASSWORD = 'a long enough password';
let smtp: SmtpSink;
let open: TestApp;
let base: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  open = await createTestApp({ SIGNUP: 'open', SIGNUP_CREDIT: '2', SMTP_URL: smtp.url, SIGNUP_RPM: '1000', CONSOLE_SIGNIN_RPM: '1000' });
  await open.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(open.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await open?.close();
  await smtp?.close();
});

let serial = 0;
const freshEmail = (name = 'person') => `${name}-${Date.now().toString(36)}-${++serial}@example.com`;

async function http(method: string, path: string, body?: object, headers: Record<string, string> = {}) {
  const res = await request(`${base}${path}`, { method: method as 'POST', headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

const post = (t: TestApp, url: string, payload: object) => t.app.inject({ method: 'POST', url, payload });
const accountsWithEmail = async (t: TestApp, email: string) =>
  (await t.ctx.db.selectFrom('console_credentials').select('user_id').where('email', '=', email.toLowerCase()).execute()).length;

describe(`sign-up [${backendName}]`, () => {
  it('over a real port: sign up as Mixed@Case, the mail arrives, confirm, sign in in lower case, make a key, a first call billed against SIGNUP_CREDIT; the ledger is exact', async () => {
    const email = freshEmail('Mixed.Case').replace('mixed', 'Mixed');
    const mixed = email.replace('@example.com', '@Example.COM');
    expect((await http('GET', '/console/api/signup')).json).toEqual({ mode: 'open', password_reset: true });
    const signed = await http('POST', '/console/api/signup', { email: mixed, password: PASSWORD });
    expect(signed.status).toBe(202);
    const mail = await smtp.waitFor(email.toLowerCase(), /Confirm your email/);
    expect(mail.text).toContain(`${open.ctx.config.publicBaseUrl}/console/#/verify?token=`);

    // Not yet confirmed: the right password gets a 403 saying why; a wrong one the usual 401.
    const early = await http('POST', '/console/api/session', { email: email.toLowerCase(), password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.json.error.message).toMatch(/Confirm your email/);
    expect((await http('POST', '/console/api/session', { email: email.toLowerCase(), password: 'wrong password!' })).status).toBe(401);

    const token = linkToken(mail, 'verify');
    expect((await http('POST', '/console/api/verify', { token })).json).toEqual({ verified: true });
    // Single use.
    expect((await http('POST', '/console/api/verify', { token })).status).toBe(400);

    const session = await http('POST', '/console/api/session', { email: email.toLowerCase(), password: PASSWORD });
    expect(session.status).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const auth = { cookie, 'x-csrf-token': session.json.csrf_token as string };
    const account = await http('GET', '/console/api/account', undefined, auth);
    expect(account.status).toBe(200);
    expect(account.json).toMatchObject({ email: email.toLowerCase(), remain_balance: 2 });

    const key = await http('POST', '/console/api/keys', { name: 'first', unlimited: true }, auth);
    expect(key.status, JSON.stringify(key.json)).toBe(201);
    const call = await http('POST', '/v1/messages', { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }] }, { 'x-api-key': key.json.key });
    expect(call.status, JSON.stringify(call.json)).toBe(200);

    await open.ctx.textMoney.flush();
    await open.ctx.textFloats.closeAll();
    await open.ctx.textMoney.flush();
    const userId = session.json.user_id as string;
    const usage = await open.ctx.db.selectFrom('usage').select(['cost']).where('user_id', '=', userId).execute();
    expect(usage).toHaveLength(1);
    const cost = Number(usage[0]!.cost);
    expect(cost).toBeGreaterThan(0);
    const ledger = await open.ctx.db.selectFrom('ledger').selectAll().where('user_id', '=', userId).orderBy('id').execute();
    expect(ledger[0]).toMatchObject({ kind: 'topup', note: 'signup credit' });
    expect(Number(ledger[0]!.balance_delta)).toBe(2_000_000);
    const user = await open.ctx.db.selectFrom('users').select(['balance', 'used']).where('id', '=', userId).executeTakeFirstOrThrow();
    expect(Number(user.balance)).toBe(2_000_000 - cost);
    expect(Number(user.used)).toBe(cost);
    expect(ledger.reduce((sum, row) => sum + Number(row.balance_delta), 0)).toBe(2_000_000 - cost);
    const after = await http('GET', '/console/api/account', undefined, auth);
    expect(Math.round(after.json.remain_balance * 1e6)).toBe(2_000_000 - cost);
    expect(Math.round(after.json.used_balance * 1e6)).toBe(cost);
    expect(await auditLedger(open.ctx.db)).toEqual([]);
  });

  it('a second sign-up with the same email (any case, or racing) makes no second account: the same answer, and a mail saying there is one', async () => {
    const email = freshEmail('twice');
    const first = await post(open, '/console/api/signup', { email, password: PASSWORD });
    expect(first.statusCode).toBe(202);
    await open.app.inject({ method: 'POST', url: '/console/api/verify', payload: { token: linkToken(await smtp.waitFor(email, /Confirm/), 'verify') } });
    const again = await post(open, '/console/api/signup', { email: email.toUpperCase(), password: 'another password here' });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual(first.json());
    const told = await smtp.waitFor(email, /already have/);
    expect(told.text).toMatch(/already has one/);
    expect(await accountsWithEmail(open, email)).toBe(1);
    // The first password still works; the second never became one.
    expect((await post(open, '/console/api/session', { email, password: PASSWORD })).statusCode).toBe(200);
    expect((await post(open, '/console/api/session', { email, password: 'another password here' })).statusCode).toBe(401);

    const raced = freshEmail('race');
    const users = async () => Number((await open.ctx.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await users();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(open, '/console/api/signup', { email: i % 2 ? raced.toUpperCase() : raced, password: PASSWORD })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(6).fill(202));
    expect(await accountsWithEmail(open, raced)).toBe(1);
    expect(await users()).toBe(before + 1);
    expect(await auditLedger(open.ctx.db)).toEqual([]);
  });

  it('the operator setting an email a sign-up takes at the same moment: one of them has it, never a 500', async () => {
    const { user } = await seedAccount(open.ctx, 1);
    for (let i = 0; i < 4; i++) {
      const email = freshEmail('contested');
      const [set, signed] = await Promise.all([
        open.app.inject({ method: 'PUT', url: `/admin/users/${user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } }),
        post(open, '/console/api/signup', { email, password: PASSWORD }),
      ]);
      expect(signed.statusCode).toBe(202);
      expect([200, 400]).toContain(set.statusCode);
      if (set.statusCode === 400) expect(set.json().error).toMatchObject({ code: 400, message: 'email: already used by another account' });
      expect(await accountsWithEmail(open, email)).toBe(1);
    }
  });

  it('a password reset: same answer for any email, the link sets a new password, the old one and the other sessions end, the link works once', async () => {
    const email = freshEmail('reset');
    await post(open, '/console/api/signup', { email, password: PASSWORD });
    await open.app.inject({ method: 'POST', url: '/console/api/verify', payload: { token: linkToken(await smtp.waitFor(email, /Confirm/), 'verify') } });
    const signedIn = await post(open, '/console/api/session', { email, password: PASSWORD });
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;

    const unknown = await post(open, '/console/api/password-reset', { email: freshEmail('nobody') });
    const known = await post(open, '/console/api/password-reset', { email: email.toUpperCase() });
    expect([unknown.statusCode, known.statusCode]).toEqual([202, 202]);
    expect(unknown.json()).toEqual(known.json());
    const token = linkToken(await smtp.waitFor(email, /new password/), 'reset');

    const short = await post(open, '/console/api/password-reset/confirm', { token, password: 'short' });
    expect(short.statusCode).toBe(400);
    const done = await post(open, '/console/api/password-reset/confirm', { token, password: 'the new password 1' });
    expect(done.statusCode, done.body).toBe(200);
    expect((await post(open, '/console/api/session', { email, password: PASSWORD })).statusCode).toBe(401);
    expect((await post(open, '/console/api/session', { email, password: 'the new password 1' })).statusCode).toBe(200);
    expect((await open.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } })).statusCode).toBe(401);
    expect((await post(open, '/console/api/password-reset/confirm', { token, password: 'yet another password' })).statusCode).toBe(400);
    expect((await post(open, '/console/api/password-reset/confirm', { token: 'made-up', password: 'yet another password' })).statusCode).toBe(400);
    // No mail went to the unknown address.
    expect(smtp.mails.filter((m) => m.to.some((to) => to.startsWith('nobody-')))).toEqual([]);
  });

  it('an email two sign-ups named keeps neither password: the one link left confirms it and lets its reader choose one', async () => {
    const email = freshEmail('prehijack');
    const mailsTo = () => smtp.mails.filter((m) => m.to.includes(email) && /Confirm/.test(m.subject));
    // Someone signs up first with another person's address; then that person signs up.
    expect((await post(open, '/console/api/signup', { email, password: 'the squatter password' })).statusCode).toBe(202);
    const squatterLink = linkToken(await smtp.waitFor(email, /Confirm/), 'verify');
    expect((await post(open, '/console/api/signup', { email, password: PASSWORD })).statusCode).toBe(202);
    for (let i = 0; i < 200 && mailsTo().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const lastLink = linkToken(mailsTo()[1]!, 'verify');
    // The link mailed before the second sign-up confirms nothing any more.
    expect((await post(open, '/console/api/verify', { token: squatterLink })).statusCode).toBe(400);
    const verified = await post(open, '/console/api/verify', { token: lastLink });
    expect(verified.statusCode, verified.body).toBe(200);
    const { password_token } = verified.json();
    expect(password_token).toEqual(expect.any(String));
    // Whoever signed up in whichever order, neither password signs in (the squatter's would have
    // opened the owner's account once the owner confirmed it).
    for (const password of ['the squatter password', PASSWORD]) expect((await post(open, '/console/api/session', { email, password })).statusCode).toBe(401);
    // The mail's reader sets the password with the token the confirmation gave.
    expect((await post(open, '/console/api/password-reset/confirm', { token: password_token, password: 'chosen after confirming' })).statusCode).toBe(200);
    expect((await post(open, '/console/api/session', { email, password: 'chosen after confirming' })).statusCode).toBe(200);
    expect((await post(open, '/console/api/session', { email, password: 'the squatter password' })).statusCode).toBe(401);
    expect(await accountsWithEmail(open, email)).toBe(1);
  });

  it('an uncontested confirmation gives no password token; sign-ups racing for an unconfirmed email leave one working link and no password', async () => {
    const single = freshEmail('uncontested');
    await post(open, '/console/api/signup', { email: single, password: PASSWORD });
    const plain = await post(open, '/console/api/verify', { token: linkToken(await smtp.waitFor(single, /Confirm/), 'verify') });
    expect(plain.json()).toEqual({ verified: true });

    const email = freshEmail('racing-unconfirmed');
    await post(open, '/console/api/signup', { email, password: 'the first password' });
    await smtp.waitFor(email, /Confirm/);
    const passwords = Array.from({ length: 5 }, (_, i) => `racing password ${i}`);
    const answers = await Promise.all(passwords.map((password) => post(open, '/console/api/signup', { email, password })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(5).fill(202));
    const { user_id } = await open.ctx.db.selectFrom('console_credentials').select('user_id').where('email', '=', email).executeTakeFirstOrThrow();
    const live = await open.ctx.db.selectFrom('signup_tokens').select('token_hash').where('user_id', '=', user_id).where('purpose', '=', 'verify').where('used_at', 'is', null).execute();
    expect(live).toHaveLength(1);
    for (let i = 0; i < 200 && smtp.mails.filter((m) => m.to.includes(email)).length < 6; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const verified = await Promise.all(smtp.mails.filter((m) => m.to.includes(email)).map((m) => post(open, '/console/api/verify', { token: linkToken(m, 'verify') })));
    expect(verified.map((v) => v.statusCode).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(verified.find((v) => v.statusCode === 200)!.json().password_token).toEqual(expect.any(String));
    // No password of any sign-up is left, without sign-in's limit on wrong passwords in the way.
    const { verifyPassword } = await import('../src/modules/console/password.ts');
    const { password_hash } = await open.ctx.db.selectFrom('console_credentials').select('password_hash').where('user_id', '=', user_id).executeTakeFirstOrThrow();
    for (const password of ['the first password', ...passwords]) expect(await verifyPassword(password, password_hash)).toBe(false);
  });

  it('an account whose email is not confirmed makes no key, even with a session', async () => {
    const email = freshEmail('unconfirmed');
    await post(open, '/console/api/signup', { email, password: PASSWORD });
    await smtp.waitFor(email, /Confirm/);
    const { user_id } = await open.ctx.db.selectFrom('console_credentials').select('user_id').where('email', '=', email).executeTakeFirstOrThrow();
    const now = Date.now();
    // A session row as sign-in would write it (sign-in itself refuses this account).
    const { tokenHash } = await import('../src/modules/console/session-guard.ts');
    await open.ctx.db.insertInto('console_sessions').values({ token_hash: tokenHash('unconfirmed-session'), role: 'account', user_id, csrf_token: 'csrf-unconfirmed', created_at: now, expires_at: now + 60_000 }).execute();
    const res = await open.app.inject({ method: 'POST', url: '/console/api/keys', headers: { cookie: 'gw_console=unconfirmed-session', 'x-csrf-token': 'csrf-unconfirmed' }, payload: { name: 'nope', unlimited: true } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toMatch(/Confirm your email/);
  });

  it('the operator\'s own accounts need no confirmation', async () => {
    const user = (await open.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders, payload: { name: 'operator-made' } })).json();
    const email = freshEmail('operator');
    expect((await open.app.inject({ method: 'PUT', url: `/admin/users/${user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } })).statusCode).toBe(200);
    expect((await post(open, '/console/api/session', { email, password: PASSWORD })).statusCode).toBe(200);
  });
});

describe(`sign-up modes, expiry and limits [${backendName}]`, () => {
  it('closed (the default): 403, and the console is told so', async () => {
    const closed = await createTestApp();
    try {
      expect((await closed.app.inject({ method: 'GET', url: '/console/api/signup' })).json()).toEqual({ mode: 'closed', password_reset: false });
      const res = await post(closed, '/console/api/signup', { email: freshEmail(), password: PASSWORD });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toMatch(/closed/);
    } finally {
      await closed.close();
    }
  });

  it('open or invite without SMTP_URL stops the start with a clear error', () => {
    expect(() => loadConfig({ SIGNUP: 'invite' })).toThrow(ConfigError);
    expect(() => loadConfig({ SIGNUP: 'open' })).toThrow(/SMTP_URL must be set when SIGNUP is open/);
    expect(() => loadConfig({ SIGNUP: 'sometimes' })).toThrow(/SIGNUP must be one of closed, open, invite/);
    expect(() => loadConfig({ SIGNUP_CREDIT: '-1' })).toThrow(/SIGNUP_CREDIT/);
  });

  it('invite mode: no invite, a made-up one, one for another email are refused; a valid one opens one account once', async () => {
    const invited = await createTestApp({ SIGNUP: 'invite', SMTP_URL: smtp.url, SIGNUP_RPM: '1000' });
    try {
      const email = freshEmail('invited');
      expect((await post(invited, '/console/api/signup', { email, password: PASSWORD })).statusCode).toBe(403);
      expect((await post(invited, '/console/api/signup', { email, password: PASSWORD, invite: 'inv-made-up' })).statusCode).toBe(403);
      const made = await invited.app.inject({ method: 'POST', url: '/admin/invites', headers: adminHeaders, payload: { email: email.toUpperCase() } });
      expect(made.statusCode, made.body).toBe(201);
      const invite = made.json();
      expect(invite).toMatchObject({ email, status: 'active', used_by: null });
      expect(invite.link).toBe(`${invited.ctx.config.publicBaseUrl}/console/#/signup?invite=${invite.code}`);
      const other = await post(invited, '/console/api/signup', { email: freshEmail('other'), password: PASSWORD, invite: invite.code });
      expect(other.statusCode).toBe(403);
      expect(other.json().error.message).toMatch(/another email/);

      const ok = await post(invited, '/console/api/signup', { email: email.replace('invited', 'INVITED'), password: PASSWORD, invite: invite.code });
      expect(ok.statusCode, ok.body).toBe(202);
      await smtp.waitFor(email, /Confirm/);
      expect(await accountsWithEmail(invited, email)).toBe(1);
      const again = await post(invited, '/console/api/signup', { email: freshEmail('again'), password: PASSWORD, invite: invite.code });
      expect(again.statusCode).toBe(403);

      // An invite for anyone; a withdrawn one is refused.
      const open2 = (await invited.app.inject({ method: 'POST', url: '/admin/invites', headers: adminHeaders, payload: {} })).json();
      expect(open2.email).toBeNull();
      expect((await invited.app.inject({ method: 'DELETE', url: `/admin/invites/${open2.id}`, headers: adminHeaders })).json().status).toBe('revoked');
      expect((await post(invited, '/console/api/signup', { email: freshEmail('late'), password: PASSWORD, invite: open2.code })).statusCode).toBe(403);
      const list = (await invited.app.inject({ method: 'GET', url: '/admin/invites', headers: adminHeaders })).json().data;
      const used = list.find((i: { id: string }) => i.id === invite.id);
      expect(used).toMatchObject({ status: 'used', used_by: expect.stringMatching(/^usr_/) });
      expect(JSON.stringify(list)).not.toContain(invite.code);
      expect((await invited.app.inject({ method: 'DELETE', url: '/admin/invites/inv_nope', headers: adminHeaders })).statusCode).toBe(404);
    } finally {
      await invited.close();
    }
  });

  it('links expire (SIGNUP_VERIFY_TTL_S, PASSWORD_RESET_TTL_S of 1 s); past SIGNUP_RPM a minute, 429', async () => {
    const short = await createTestApp({ SIGNUP: 'open', SMTP_URL: smtp.url, SIGNUP_VERIFY_TTL_S: '1', PASSWORD_RESET_TTL_S: '1', SIGNUP_RPM: '3' });
    try {
      await awayFromRateWindowEdge();
      const email = freshEmail('expiry');
      expect((await post(short, '/console/api/signup', { email, password: PASSWORD })).statusCode).toBe(202);
      const verify = linkToken(await smtp.waitFor(email, /Confirm/), 'verify');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const late = await post(short, '/console/api/verify', { token: verify });
      expect(late.statusCode).toBe(400);
      expect(late.json().error.message).toMatch(/expired/);
      // Third request from this address this minute: still allowed; the fourth is not.
      expect((await post(short, '/console/api/verify', { token: 'another' })).statusCode).toBe(400);
      const limited = await post(short, '/console/api/signup', { email: freshEmail('limited'), password: PASSWORD });
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await post(short, '/console/api/password-reset', { email })).statusCode).toBe(429);
    } finally {
      await short.close();
    }
  });

  it('a reset link expires too', async () => {
    const short = await createTestApp({ SIGNUP: 'closed', SMTP_URL: smtp.url, PASSWORD_RESET_TTL_S: '1', SIGNUP_RPM: '1000' });
    try {
      const user = (await short.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders, payload: { name: 'resets' } })).json();
      const email = freshEmail('reset-expiry');
      await short.app.inject({ method: 'PUT', url: `/admin/users/${user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
      expect((await short.app.inject({ method: 'GET', url: '/console/api/signup' })).json()).toEqual({ mode: 'closed', password_reset: true });
      expect((await post(short, '/console/api/password-reset', { email })).statusCode).toBe(202);
      const token = linkToken(await smtp.waitFor(email, /new password/), 'reset');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await post(short, '/console/api/password-reset/confirm', { token, password: 'the new password 1' })).statusCode).toBe(400);
      expect((await post(short, '/console/api/session', { email, password: PASSWORD })).statusCode).toBe(200);
    } finally {
      await short.close();
    }
  });
});
