import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';
import { CLIENT_ID, CLIENT_SECRET, LOGIN_HEADER, startIdp, type TestIdp } from './support/oidc-idp.ts';

// Console sign-in through a real OpenID Connect provider (oidc-provider on a local port), driven
// over HTTP by a browser that is a cookie jar: the gateway's start and callback routes on a real
// port, the code flow with PKCE, state and nonce, and what the callback signs in, links or refuses.

interface Gateway {
  t: TestApp;
  url: string;
}

let idp: TestIdp;
/** What the gateways log, to see why a sign-in was refused. */
const logLines: string[] = [];
const gateways: Record<'open' | 'closed' | 'invite', Gateway> = {} as never;

beforeAll(async () => {
  const ports = { open: await freePort(), closed: await freePort(), invite: await freePort() };
  idp = await startIdp(Object.values(ports).map((port) => `http://127.0.0.1:${port}/console/api/oidc/callback`));
  for (const [signup, port] of Object.entries(ports) as ['open' | 'closed' | 'invite', number][]) {
    const url = `http://127.0.0.1:${port}`;
    const t = await createTestApp({
      SIGNUP: signup,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_NAME: 'Test IdP',
      PUBLIC_BASE_URL: url,
      CONSOLE_SIGNIN_RPM: '1000',
      // Sign-up by email needs a mail server; provider sign-ins send no mail, so none listens here.
      SMTP_URL: 'smtp://127.0.0.1:9',
    }, undefined, { logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) }) });
    await t.app.listen({ port, host: '127.0.0.1' });
    gateways[signup] = { t, url };
  }
}, 60_000);
afterAll(async () => {
  for (const gateway of Object.values(gateways)) await gateway.t.close();
  await idp?.close();
});

/** A browser: cookies per host and port, redirects followed by hand. */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>();
  constructor(private readonly login?: string) {}

  cookie(url: string, name: string) {
    return this.jars.get(new URL(url).host)?.get(name);
  }

  async get(url: URL): Promise<Response> {
    const jar = this.jars.get(url.host) ?? new Map<string, string>();
    this.jars.set(url.host, jar);
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (this.login) headers[LOGIN_HEADER] = this.login;
    const res = await fetch(url, { redirect: 'manual', headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const expires = attributes.map((a) => a.trim()).find((a) => /^expires=/i.test(a));
      const gone = attributes.some((a) => /^\s*max-age=0$/i.test(a)) || (expires !== undefined && Date.parse(expires.slice(8)) < Date.now());
      if (gone) jar.delete(name);
      else jar.set(name, pair!.slice(at + 1).trim());
    }
    return res;
  }
}

interface Journey {
  invite?: string;
  /** Changes the authorization request on its way to the provider. */
  toProvider?: (url: URL) => void;
  /** Changes the provider's answer on its way back to the gateway. */
  toCallback?: (url: URL) => void;
  /** Stops at the provider's answer, not sent to the gateway: returns it. */
  hold?: boolean;
}

/** From the console's button to where the gateway sends the browser back: that URL. */
async function signIn(gateway: Gateway, browser: Browser, journey: Journey = {}): Promise<URL> {
  let url = new URL(`${gateway.url}/console/api/oidc/start${journey.invite ? `?invite=${journey.invite}` : ''}`);
  for (let hop = 0; hop < 15; hop++) {
    if (url.origin === idp.issuer && url.pathname === '/auth') journey.toProvider?.(url);
    if (url.pathname === '/console/api/oidc/callback') {
      if (journey.hold) return url;
      journey.toCallback?.(url);
    }
    const res = await browser.get(url);
    const location = res.headers.get('location');
    if (!location) throw new Error(`${url} answered ${res.status} without a redirect: ${await res.text()}`);
    const next = new URL(location, url);
    if (next.origin === gateway.url && next.pathname === '/console/') return next;
    url = next;
  }
  throw new Error('too many redirects');
}

async function sessionOf(gateway: Gateway, browser: Browser) {
  const token = browser.cookie(gateway.url, 'gw_console');
  const res = await fetch(`${gateway.url}/console/api/session`, { headers: token ? { cookie: `gw_console=${token}` } : {} });
  return { status: res.status, body: (await res.json()) as { role: string; user_id: string | null } };
}

async function counts(gateway: Gateway) {
  const { db } = gateway.t.ctx;
  const users = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const identities = await db.selectFrom('oidc_identities').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { users: Number(users.n), identities: Number(identities.n) };
}

function person(account: { email?: string; email_verified?: boolean }) {
  const id = `person-${randomBytes(4).toString('hex')}`;
  idp.accounts.set(id, account);
  return id;
}

const newEmail = () => `oidc-${randomBytes(4).toString('hex')}@example.com`;

describe(`console sign-in with an OpenID Connect provider [${backendName}]`, () => {
  it('the console learns the provider is on and its name', async () => {
    const res = await gateways.open.t.app.inject({ method: 'GET', url: '/console/api/oidc' });
    expect(res.json()).toEqual({ enabled: true, name: 'Test IdP' });
  });

  it('start sends the browser to the provider: code flow, PKCE S256, state and nonce; a short-lived HttpOnly cookie', async () => {
    const res = await gateways.open.t.app.inject({ method: 'GET', url: '/console/api/oidc/start' });
    expect(res.statusCode).toBe(302);
    const to = new URL(res.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(`${idp.issuer}/auth`);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: `${gateways.open.url}/console/api/oidc/callback`,
      scope: 'openid email profile',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^[\w-]{20,}$/),
      nonce: expect.stringMatching(/^[\w-]{20,}$/),
    });
    expect(res.headers['set-cookie']).toMatch(/^gw_oidc=[\w-]{40,}; Path=\/console\/api\/oidc; HttpOnly; SameSite=Lax; Max-Age=600$/);
  });

  it('a first sign-in opens an account (SIGNUP=open) whose session cookie works; a second one reuses it', async () => {
    const gateway = gateways.open;
    const email = newEmail();
    const login = person({ email: email.toUpperCase(), email_verified: true });
    const before = await counts(gateway);

    const browser = new Browser(login);
    const landed = await signIn(gateway, browser);
    expect(landed.search).toBe('');
    const session = await sessionOf(gateway, browser);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ role: 'account', user_id: expect.stringMatching(/^usr_/) });
    expect(browser.cookie(gateway.url, 'gw_oidc')).toBeUndefined();
    const credentials = await gateway.t.ctx.db.selectFrom('console_credentials').selectAll().where('user_id', '=', session.body.user_id!).executeTakeFirstOrThrow();
    expect(credentials.email).toBe(email);
    expect(await counts(gateway)).toEqual({ users: before.users + 1, identities: before.identities + 1 });

    // Another browser, same person: the linked identity signs in to the same account.
    const again = new Browser(login);
    await signIn(gateway, again);
    expect((await sessionOf(gateway, again)).body.user_id).toBe(session.body.user_id);
    expect(await counts(gateway)).toEqual({ users: before.users + 1, identities: before.identities + 1 });
  });

  it('an existing password account whose email the provider has verified is linked and signed in', async () => {
    const gateway = gateways.closed;
    const account = await seedAccount(gateway.t.ctx, 1);
    const email = newEmail();
    const set = await gateway.t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    expect(set.statusCode).toBe(200);
    const before = await counts(gateway);

    const browser = new Browser(person({ email, email_verified: true }));
    expect((await signIn(gateway, browser)).search).toBe('');
    expect((await sessionOf(gateway, browser)).body.user_id).toBe(account.user.id);
    expect(await counts(gateway)).toEqual({ users: before.users, identities: before.identities + 1 });
    // The password still works.
    const password = await gateway.t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'correct horse battery' } });
    expect(password.statusCode).toBe(200);
  });

  it('a sign-up never confirmed: the provider confirms the email, and the password whoever signed up chose stops working', async () => {
    const gateway = gateways.open;
    const email = newEmail();
    // Someone signs up with this address (the mail never confirmed: SMTP goes nowhere here).
    expect((await gateway.t.app.inject({ method: 'POST', url: '/console/api/signup', payload: { email, password: 'the squatter password' } })).statusCode).toBe(202);
    const { user_id } = await gateway.t.ctx.db.selectFrom('console_credentials').select('user_id').where('email', '=', email).executeTakeFirstOrThrow();

    const browser = new Browser(person({ email, email_verified: true }));
    expect((await signIn(gateway, browser)).search).toBe('');
    expect((await sessionOf(gateway, browser)).body.user_id).toBe(user_id);
    const credentials = await gateway.t.ctx.db.selectFrom('console_credentials').selectAll().where('user_id', '=', user_id).executeTakeFirstOrThrow();
    expect(credentials.email_verified_at).not.toBeNull();
    const squatter = await gateway.t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'the squatter password' } });
    expect(squatter.statusCode).toBe(401);
    // Confirmed by the provider: the person signed in may make keys.
    const token = browser.cookie(gateway.url, 'gw_console')!;
    const csrf = (await (await fetch(`${gateway.url}/console/api/session`, { headers: { cookie: `gw_console=${token}` } })).json()) as { csrf_token: string };
    const key = await gateway.t.app.inject({ method: 'POST', url: '/console/api/keys', headers: { cookie: `gw_console=${token}`, 'x-csrf-token': csrf.csrf_token }, payload: { name: 'mine', unlimited: true } });
    expect(key.statusCode, key.body).toBe(201);
  });

  it('an email the provider has not verified never reaches an existing account, nor opens one', async () => {
    const gateway = gateways.open;
    const account = await seedAccount(gateway.t.ctx, 1);
    const email = newEmail();
    await gateway.t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    const before = await counts(gateway);
    for (const claims of [{ email, email_verified: false }, { email }, { email: newEmail(), email_verified: false }]) {
      const browser = new Browser(person(claims));
      expect((await signIn(gateway, browser)).searchParams.get('oidc_error')).toBe('unverified');
      expect((await sessionOf(gateway, browser)).status).toBe(401);
    }
    expect(await counts(gateway)).toEqual(before);
  });

  it('a forged state is refused and creates nothing; so are a callback without the browser cookie and a replayed one', async () => {
    const gateway = gateways.open;
    const before = await counts(gateway);
    const forged = new Browser(person({ email: newEmail(), email_verified: true }));
    const landed = await signIn(gateway, forged, { toCallback: (url) => url.searchParams.set('state', randomBytes(16).toString('base64url')) });
    expect(landed.searchParams.get('oidc_error')).toBe('state');
    expect((await sessionOf(gateway, forged)).status).toBe(401);

    const missing = await forged.get(new URL(`${gateway.url}/console/api/oidc/callback?code=abc`));
    expect(missing.headers.get('location')).toBe('/console/?oidc_error=state');
    expect(await counts(gateway)).toEqual(before);

    // The provider's answer carried to another browser (login CSRF, a stolen code): without the
    // cookie of the browser that started it, nothing; that browser itself then signs in with it, once.
    const owner = new Browser(person({ email: newEmail(), email_verified: true }));
    const answer = await signIn(gateway, owner, { hold: true });
    const stranger = new Browser();
    const res = await stranger.get(answer);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console/?oidc_error=state');
    expect((await sessionOf(gateway, stranger)).status).toBe(401);
    expect(await counts(gateway)).toEqual(before);
    expect((await owner.get(answer)).headers.get('location')).toBe('/console/');
    expect((await sessionOf(gateway, owner)).status).toBe(200);
    const replay = await owner.get(answer);
    expect(replay.headers.get('location')).toBe('/console/?oidc_error=state');
  });

  it('an ID token whose nonce is not the one this sign-in sent is refused', async () => {
    const gateway = gateways.open;
    const before = await counts(gateway);
    const browser = new Browser(person({ email: newEmail(), email_verified: true }));
    const landed = await signIn(gateway, browser, { toProvider: (url) => url.searchParams.set('nonce', randomBytes(16).toString('base64url')) });
    expect(landed.searchParams.get('oidc_error')).toBe('token');
    const refusal = logLines.map((line) => JSON.parse(line)).find((entry) => /did not check out/.test(entry.msg));
    expect(refusal?.err).toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', message: expect.stringContaining('"nonce" claim value') });
    expect((await sessionOf(gateway, browser)).status).toBe(401);
    expect(await counts(gateway)).toEqual(before);
  });

  it('SIGNUP=closed refuses an unknown email; SIGNUP=invite refuses one without a valid invitation', async () => {
    for (const [gateway, journey, code] of [
      [gateways.closed, {}, 'closed'],
      [gateways.invite, {}, 'invite'],
      [gateways.invite, { invite: 'no-such-invitation' }, 'invite'],
    ] as const) {
      const before = await counts(gateway);
      const browser = new Browser(person({ email: newEmail(), email_verified: true }));
      expect((await signIn(gateway, browser, journey)).searchParams.get('oidc_error')).toBe(code);
      expect((await sessionOf(gateway, browser)).status).toBe(401);
      expect(await counts(gateway)).toEqual(before);
    }
  });

  it('SIGNUP=invite opens an account with an operator invitation, once', async () => {
    const gateway = gateways.invite;
    const email = newEmail();
    const made = await gateway.t.app.inject({ method: 'POST', url: '/admin/invites', headers: adminHeaders, payload: { email } });
    expect(made.statusCode).toBe(201);
    const { code, id } = made.json();
    const before = await counts(gateway);
    const browser = new Browser(person({ email, email_verified: true }));
    expect((await signIn(gateway, browser, { invite: code })).searchParams.get('oidc_error')).toBeNull();
    const session = await sessionOf(gateway, browser);
    expect(session.status).toBe(200);
    expect(await counts(gateway)).toEqual({ users: before.users + 1, identities: before.identities + 1 });
    const invites = (await gateway.t.app.inject({ method: 'GET', url: '/admin/invites', headers: adminHeaders })).json().data;
    expect(invites.find((i: { id: string }) => i.id === id)).toMatchObject({ status: 'used', used_by: session.body.user_id });
    // The same invitation opens nothing for another person.
    const other = new Browser(person({ email: newEmail(), email_verified: true }));
    expect((await signIn(gateway, other, { invite: code })).searchParams.get('oidc_error')).toBe('invite');
  });

  it('the provider refusing (the person cancels) lands on the sign-in page with its code', async () => {
    const gateway = gateways.open;
    const browser = new Browser(person({ email: newEmail(), email_verified: true }));
    const landed = await signIn(gateway, browser, {
      toCallback: (url) => {
        url.searchParams.delete('code');
        url.searchParams.set('error', 'access_denied');
      },
    });
    expect(landed.searchParams.get('oidc_error')).toBe('denied');
  });

  it('a linked account that has been disabled cannot sign in', async () => {
    const gateway = gateways.open;
    const login = person({ email: newEmail(), email_verified: true });
    const first = new Browser(login);
    await signIn(gateway, first);
    const userId = (await sessionOf(gateway, first)).body.user_id!;
    await gateway.t.ctx.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', userId).execute();
    expect((await signIn(gateway, new Browser(login))).searchParams.get('oidc_error')).toBe('disabled');
  });
});

describe(`provider sign-in switched off or out of reach [${backendName}]`, () => {
  it('without OIDC_ISSUER the console hides the button and the routes are 404', async () => {
    const t = await createTestApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/console/api/oidc' })).json()).toEqual({ enabled: false, name: null });
      for (const url of ['/console/api/oidc/start', '/console/api/oidc/callback?code=x&state=y']) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(404);
        expect(res.json().error.message).toMatch(/OIDC_ISSUER/);
      }
    } finally {
      await t.close();
    }
  });

  it('an unreachable issuer does not stop start-up; sign-in says so, and tries discovery again next time', async () => {
    const port = await freePort();
    const t = await createTestApp({ OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET });
    let late: TestIdp | undefined;
    try {
      const down = await t.app.inject({ method: 'GET', url: '/console/api/oidc/start' });
      expect(down.statusCode).toBe(302);
      expect(down.headers.location).toBe('/console/?oidc_error=unreachable');
      late = await startIdp([`${t.ctx.config.publicBaseUrl}/console/api/oidc/callback`], port);
      const up = await t.app.inject({ method: 'GET', url: '/console/api/oidc/start' });
      expect(up.statusCode).toBe(302);
      expect(up.headers.location).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/auth\\?`));
    } finally {
      await t.close();
      await late?.close();
    }
  });
});
