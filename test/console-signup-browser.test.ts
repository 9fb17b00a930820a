import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, backendName, createTestApp, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';
import { linkIn, startSmtpSink, type SmtpSink } from './support/smtp-sink.ts';

// Sign-up and password reset in Chromium against a real port, with the mails caught by a real SMTP
// server: a person creates an account from the sign-in page, opens the mailed link, signs in; another
// asks for a new password and sets it through the link. Every page passes axe-core's WCAG A/AA checks
// at desktop and phone widths, the operator's Invites page too.

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-signup-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

let t: TestApp;
let smtp: SmtpSink;
let base = '';
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  smtp = await startSmtpSink();
  const port = await freePort();
  base = `http://localhost:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base, SIGNUP: 'open', SIGNUP_CREDIT: '1', SMTP_URL: smtp.url, SIGNUP_RPM: '1000', CONSOLE_SIGNIN_RPM: '1000' });
  await t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

async function newPage(viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: base });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** Nothing sticks out sideways: at 390 px every control is reachable without scrolling. */
const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

describe.skipIf(!haveChromium)(`console sign-up and password reset in Chromium [${backendName}]`, () => {
  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    it(`${width}: create an account from the sign-in page, open the mailed link, sign in; every page axe-clean`, async () => {
      const problems: string[] = [];
      const email = `Browser-${width}-${Date.now().toString(36)}@Example.com`;
      const { context, page } = await newPage(viewport);
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Forgot your password?' }).waitFor();
      await shot(page, `signin-with-signup-${width}`);
      problems.push(...(await axeProblems(page, `signin-with-signup-${width}`)));
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByRole('heading', { name: 'Create an account' }).waitFor();
      problems.push(...(await axeProblems(page, `signup-${width}`)));
      const form = page.getByRole('form', { name: 'Create an account' });
      await form.getByLabel('Email').fill(email);
      // Too short: the server's 400 shows in the page.
      await form.getByLabel('Password (at least 10 characters)').evaluate((input: HTMLInputElement) => input.removeAttribute('minlength'));
      await form.getByLabel('Password (at least 10 characters)').fill('short');
      await form.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('alert').filter({ hasText: 'password: at least 10 characters' }).waitFor();
      await form.getByLabel('Password (at least 10 characters)').fill(PASSWORD);
      await form.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('status').filter({ hasText: 'Check your mail' }).waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, `signup-sent-${width}`);

      const mail = await smtp.waitFor(email.toLowerCase(), /Confirm your email/);
      await page.goto(linkIn(mail, 'verify'));
      await page.getByRole('status').filter({ hasText: 'Your email is confirmed.' }).waitFor();
      problems.push(...(await axeProblems(page, `verify-${width}`)));
      await shot(page, `verify-${width}`);
      await page.getByRole('link', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Email').fill(email.toLowerCase());
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByTestId('remain-balance').filter({ hasText: '$1.00' }).waitFor();

      // The link works once: opened again, it says so.
      await page.goto(linkIn(mail, 'verify'));
      await page.getByRole('alert').filter({ hasText: 'not valid any more' }).waitFor();
      await context.close();
      expect(problems).toEqual([]);
    }, 90_000);

    it(`${width}: forgot password: the mailed link sets a new one, the old one stops working; every page axe-clean`, async () => {
      const problems: string[] = [];
      const email = `reset-${width}-${Date.now().toString(36)}@example.com`;
      const user = (await t.app.inject({ method: 'POST', url: '/admin/users', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: `reset-${width}` } })).json();
      await t.app.inject({ method: 'PUT', url: `/admin/users/${user.id}/console-credentials`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { email, password: PASSWORD } });

      const { context, page } = await newPage(viewport);
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
      problems.push(...(await axeProblems(page, `forgot-${width}`)));
      await page.getByLabel('Email').fill(email.toUpperCase());
      await page.getByRole('button', { name: 'Mail me a link' }).click();
      await page.getByRole('status').filter({ hasText: 'If an account has this address' }).waitFor();
      await shot(page, `forgot-sent-${width}`);

      const mail = await smtp.waitFor(email, /new password/);
      await page.goto(linkIn(mail, 'reset'));
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      problems.push(...(await axeProblems(page, `reset-${width}`)));
      await page.getByLabel('New password (at least 10 characters)').fill('a brand new password');
      await page.getByLabel('New password again').fill('a different password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('alert').filter({ hasText: 'The two passwords differ' }).waitFor();
      await page.getByLabel('New password again').fill('a brand new password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('status').filter({ hasText: 'Your new password is set' }).waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, `reset-done-${width}`);
      problems.push(...(await axeProblems(page, `reset-done-${width}`)));

      await page.getByRole('link', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Email or password is incorrect' }).waitFor();
      await context.close();
      const fresh = await newPage(viewport);
      await signInAsHolder(fresh.page, email, 'a brand new password');
      await fresh.context.close();
      expect(problems).toEqual([]);
    }, 90_000);
  }

  it('the operator Invites page: an invite made in the page is shown once and listed; axe-clean at both widths', async () => {
    const problems: string[] = [];
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await signInAsOperator(page, ADMIN_TOKEN);
      await page.getByRole('link', { name: 'Invites' }).click();
      const form = page.getByRole('form', { name: 'Make an invite' });
      await form.getByLabel('For email (empty = anyone)').fill(`Invitee-${width}@Example.com`);
      await form.getByRole('button', { name: 'Make invite' }).click();
      const link = (await page.getByTestId('invite-link').textContent())!;
      expect(link).toMatch(new RegExp(`^${base}/console/#/signup\\?invite=inv-[0-9a-f]{32}$`));
      await page.getByRole('region', { name: 'Invites', exact: true }).getByText(`invitee-${width}@example.com`).waitFor();
      expect(await page.getByRole('region', { name: 'Invites', exact: true }).textContent()).not.toContain(link.split('invite=')[1]);
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, `operator-invites-${width}`);
      problems.push(...(await axeProblems(page, `operator-invites-${width}`)));
      await context.close();
    }
    expect(problems).toEqual([]);
  }, 90_000);
});
