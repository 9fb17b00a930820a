import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';
import { CLIENT_ID, CLIENT_SECRET, LOGIN_HEADER, startIdp, type TestIdp } from './support/oidc-idp.ts';

// The sign-in page's provider button in Chromium, through a real OpenID Connect provider. The
// gateway is on localhost and the provider on 127.0.0.1: two sites, as in production, so the
// browser's own SameSite rules decide whether the sign-in cookie and the session cookie make it.
// Sign-up is by invitation (SIGNUP=invite; nothing is mailed here, so the SMTP address is never dialled).

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

let t: TestApp;
let idp: TestIdp;
let base = '';
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  const port = await freePort();
  base = `http://localhost:${port}`;
  idp = await startIdp([`${base}/console/api/oidc/callback`]);
  t = await createTestApp({ PUBLIC_BASE_URL: base, OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_NAME: 'Test IdP', CONSOLE_SIGNIN_RPM: '1000', SIGNUP: 'invite', SMTP_URL: 'smtp://127.0.0.1:9' });
  await t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await idp?.close();
});

/** A page whose person at the provider is `login` (the provider's login form, in effect). */
async function newPage(login: string, viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: base, extraHTTPHeaders: { [LOGIN_HEADER]: login } });
  return { context, page: await context.newPage() };
}

function person(email: string) {
  const id = `person-${randomBytes(4).toString('hex')}`;
  idp.accounts.set(id, { email, email_verified: true });
  return id;
}

describe.skipIf(!haveChromium)(`sign-in with an identity provider in Chromium [${backendName}]`, () => {
  it('the button signs a holder in through the provider, across sites, to their overview', async () => {
    const account = await seedAccount(t.ctx, 3);
    const email = `browser-${randomBytes(4).toString('hex')}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'browser-test-password' } });
    const { context, page } = await newPage(person(email));
    try {
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const session = await page.evaluate(async () => (await fetch('/console/api/session')).json());
      expect(session).toMatchObject({ role: 'account', user_id: account.user.id });
    } finally {
      await context.close();
    }
  });

  it("an invite link's page opens the account through the provider, with the invitation", async () => {
    const email = `invited-${randomBytes(4).toString('hex')}@example.com`;
    const made = await t.app.inject({ method: 'POST', url: '/admin/invites', headers: adminHeaders, payload: { email } });
    expect(made.statusCode).toBe(201);
    const { context, page } = await newPage(person(email));
    try {
      // The operator's link, as handed over: the console's sign-up page with the code after the hash.
      const link = new URL(made.json().link as string);
      expect(link.hash).toMatch(/^#\/signup\?invite=/);
      await page.goto(link.pathname + link.hash);
      await page.getByRole('link', { name: 'Sign up with Test IdP' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const session = await page.evaluate(async () => (await fetch('/console/api/session')).json());
      expect(session).toMatchObject({ role: 'account' });
      const invites = (await t.app.inject({ method: 'GET', url: '/admin/invites', headers: adminHeaders })).json().data;
      expect(invites.find((i: { id: string }) => i.id === made.json().id)).toMatchObject({ status: 'used', used_by: session.user_id });
    } finally {
      await context.close();
    }
  });

  it('a refused sign-in comes back to the page, which says why; it passes axe and fits a phone', async () => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(person(`stranger-${randomBytes(4).toString('hex')}@example.com`), viewport);
      try {
        await page.goto('/console/');
        await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
        await page.getByRole('alert').filter({ hasText: 'A new account needs a valid invitation' }).waitFor();
        expect(new URL(page.url()).search).toBe('');
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        await page.screenshot({ path: path.join(SCREENSHOTS, `sign-in-provider-${name}.png`), fullPage: true });
        expect(await axeProblems(page, `sign-in with provider (${name})`)).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });
});
