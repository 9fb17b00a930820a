import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';
import { freePort } from './support/gateway-process.ts';

// The holder's Top-up page and the operator's Top-ups list in Chromium, against a real port and the
// local fake of Stripe: an amount typed and submitted sends the browser to the checkout page the
// gateway got from Stripe; Stripe's signed event credits it, and back at the console the history
// shows it paid. Both pages pass axe-core's WCAG A/AA checks at desktop and phone (390px) widths.

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-test-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

let stripe: FakeStripe;
let t: TestApp;
let base = '';
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  stripe = await startFakeStripe();
  const port = await freePort();
  base = `http://localhost:${port}`;
  t = await createTestApp({ ...stripe.env, PUBLIC_BASE_URL: base, CONSOLE_SIGNIN_RPM: '1000' });
  await t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await stripe?.close();
});

async function holder() {
  const seeded = await seedAccount(t.ctx, 0);
  const email = `topup-${seeded.user.id.toLowerCase()}@example.com`;
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${seeded.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  return { ...seeded, email };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** Types the amount on the Top-up page, submits, and waits for the fake's checkout page; its session id. */
async function payInConsole(page: Page, amount: string): Promise<string> {
  await page.getByRole('link', { name: 'Top-up' }).click();
  await page.getByText('From $5.00 to $1,000.00, paid in USD at Stripe Checkout.').waitFor();
  await page.getByLabel('Amount (USD)').fill(amount);
  await page.getByRole('button', { name: 'Pay with Stripe' }).click();
  await page.waitForURL(`${stripe.url}/c/pay/**`);
  await page.getByRole('heading', { name: 'Pay with Stripe (fake)' }).waitFor();
  return new URL(page.url()).pathname.split('/').pop()!;
}

describe.skipIf(!haveChromium)(`the Top-up page in Chromium [${backendName}]`, () => {
  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    it(`at ${width} width: an amount goes to Stripe Checkout, the paid top-up shows in the history, and both pages are axe-clean`, async () => {
      const account = await holder();
      const context = await browser.newContext({ viewport, baseURL: base });
      const page = await context.newPage();
      await signInAsHolder(page, account.email, PASSWORD);
      // An amount outside the limits is refused by the gateway and said so in the page.
      await page.getByRole('link', { name: 'Top-up' }).click();
      await page.getByLabel('Amount (USD)').fill('2000');
      await page.getByLabel('Amount (USD)').evaluate((input: HTMLInputElement) => input.form!.noValidate = true);
      await page.getByRole('button', { name: 'Pay with Stripe' }).click();
      await page.getByRole('alert').filter({ hasText: 'amount must be from 5 to 1000' }).waitFor();

      const sessionId = await payInConsole(page, '12.50');
      const session = stripe.sessions.get(sessionId)!;
      expect(session).toMatchObject({ amount_total: 1250, currency: 'usd', client_reference_id: account.user.id });
      // The customer pays; Stripe sends the signed event, then the browser back to the success URL.
      const delivered = await stripe.deliver(`${base}/webhooks/stripe`, stripe.pay(sessionId));
      expect(delivered.status).toBe(200);
      await page.goto(session.success_url!.replace('{CHECKOUT_SESSION_ID}', sessionId));
      await page.getByRole('status').filter({ hasText: 'Stripe has your payment' }).waitFor();
      const row = page.getByTestId(`topup-${session.metadata.topup_id}`);
      await row.filter({ hasText: '$12.50' }).getByText('paid', { exact: true }).waitFor();
      await shot(page, `holder-topup-${width}`);
      const problems = await axeProblems(page, `holder-topup-${width}`);
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByTestId('remain-balance').filter({ hasText: '$12.50' }).waitFor();
      await context.close();

      const operatorContext = await browser.newContext({ viewport, baseURL: base });
      const operator = await operatorContext.newPage();
      await signInAsOperator(operator, ADMIN_TOKEN);
      await operator.getByRole('link', { name: 'Top-ups' }).click();
      const filter = operator.getByRole('form', { name: 'Filter top-ups' });
      await filter.getByLabel('Account id').fill(account.user.id);
      await filter.getByRole('button', { name: 'Filter' }).click();
      await operator.getByTestId(`topup-${session.metadata.topup_id}`).filter({ hasText: account.user.id }).getByText('paid', { exact: true }).waitFor();
      await expect.poll(() => operator.getByRole('region', { name: 'Top-ups' }).getByRole('row').count()).toBe(2);
      await shot(operator, `operator-topups-${width}`);
      problems.push(...(await axeProblems(operator, `operator-topups-${width}`)));
      await operatorContext.close();
      expect(problems).toEqual([]);
    }, 90_000);
  }
});
