import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

// The console in a real browser against a real port: what an account holder and the operator do.
// Screenshots of the main pages land in a temporary folder, so `npm test` leaves the tree clean;
// `npm run screenshots` refreshes the ones in docs/screenshots (linked from the README).

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-test-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };

let t: TestApp;
let base = '';
let receiver: Receiver;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let account: Awaited<ReturnType<typeof seedAccount>> & { email: string };

const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  const port = await freePort();
  // `localhost` for the pages: the callback receiver on 127.0.0.1 must not look like the gateway itself.
  base = `http://localhost:${port}`;
  receiver = await startReceiver();
  t = await createTestApp(
    { PUBLIC_BASE_URL: base, SIMULATOR_LATENCY_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', CONSOLE_SIGNIN_RPM: '1000' },
    undefined,
    { workers: true },
  );
  await t.app.listen({ port, host: '127.0.0.1' });
  const seeded = await seedAccount(t.ctx, 20);
  account = { ...seeded, email: `holder-${seeded.user.id.toLowerCase()}@example.com` };
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email: account.email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

async function newPage(viewport = VIEWPORTS.desktop): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, baseURL: base });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page };
}

const signInHolder = (page: Page) => signInAsHolder(page, account.email, PASSWORD);

const signInOperator = (page: Page) => signInAsOperator(page, ADMIN_TOKEN);

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

const a11yProblems: string[] = [];

/** Runs axe-core (WCAG 2 A/AA rules) on the page; serious and critical findings are collected. */
async function checkAccessibility(page: Page, name: string) {
  a11yProblems.push(...(await axeProblems(page, name)));
}

describe.skipIf(!haveChromium)(`console in Chromium [${backendName}]`, () => {
  it('a holder creates a key, copies it, uses it, deletes it in the page, and the API refuses it', async () => {
    const { context, page } = await newPage();
    await signInHolder(page);
    await page.getByLabel('Name', { exact: true }).fill('browser-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('new-key').textContent())!;
    expect(shown).toMatch(/^sk-gw-/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(shown);

    const balance = async () => {
      const res = await request(`${base}/v1/balance`, { headers: { authorization: `Bearer ${copied}` } });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    expect(await balance()).toMatchObject({ status: 200, body: { success: true } });

    const row = page.getByTestId('key-browser-key');
    await row.getByRole('button', { name: 'Delete key browser-key' }).click();
    await row.waitFor({ state: 'detached' });
    const refused = await request(`${base}/user/balance`, { headers: { authorization: `Bearer ${copied}` } });
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    await context.close();
  });

  it("an operator tops up the account and the holder's page shows the new balance", async () => {
    const holder = await newPage();
    await signInHolder(holder.page);
    const before = await holder.page.getByTestId('remain-balance').textContent();
    expect(before).toBe('$20.00');

    const operator = await newPage();
    await signInOperator(operator.page);
    await operator.page.getByRole('link', { name: 'Accounts' }).click();
    const row = operator.page.getByTestId(`account-${account.user.name}`);
    await row.getByLabel('Top-up amount').fill('25');
    await row.getByRole('button', { name: 'Top up' }).click();
    await row.getByTestId('account-balance').filter({ hasText: '$45.00' }).waitFor();

    await holder.page.reload();
    await holder.page.getByTestId('remain-balance').filter({ hasText: '$45.00' }).waitFor();
    await holder.context.close();
    await operator.context.close();
  });

  it('a holder redeems a code on the overview: the balance shows it, and the same code again is refused', async () => {
    const made = await t.app.inject({ method: 'POST', url: '/admin/codes', headers: adminHeaders, payload: { amount: 5, count: 1 } });
    const code = made.json().codes[0].code as string;
    const { context, page } = await newPage();
    await signInHolder(page);
    const dollars = async () => Number((await page.getByTestId('remain-balance').textContent())!.replace(/[$,]/g, ''));
    const before = await dollars();
    await page.getByLabel('Redemption code').fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').filter({ hasText: 'Redeemed: $5.00 added to your balance.' }).waitFor();
    await page.getByTestId('remain-balance').filter({ hasText: `$${(before + 5).toFixed(2)}` }).waitFor();
    await page.getByLabel('Redemption code').fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('This account has already redeemed this code').waitFor();
    expect(await dollars()).toBe(before + 5);
    await context.close();
  });

  it('a task submitted over the API appears in the task list with its image preview and callback attempts', async () => {
    const submit = await request(`${base}/v1/images/generations`, {
      method: 'POST',
      headers: { ...account.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'imggen-2', prompt: 'a lighthouse at dusk', size: '16:9', webhook: receiver.url }),
    });
    const submitted = (await submit.body.json()) as { data: { task_id: string }[] };
    expect(submit.statusCode, JSON.stringify(submitted)).toBe(200);
    const taskId = submitted.data[0]!.task_id;
    await waitUntil('the callback', () => receiver.received.some((r) => r.body.includes(taskId)), 20_000);

    const { context, page } = await newPage();
    await signInHolder(page);
    await page.getByRole('link', { name: 'Tasks' }).click();
    const task = page.getByTestId(`task-${taskId}`);
    await task.getByText('completed').waitFor();
    const preview = task.getByRole('img');
    await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await preview.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([2048, 1152].map((v) => v / 2));
    await task.getByRole('button', { name: 'Callback attempts' }).click();
    await task.getByRole('cell', { name: 'delivered' }).waitFor();
    await context.close();
  });

  it('saves screenshots of the main pages at desktop and phone widths, each passing the axe-core WCAG A/AA checks', async () => {
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await page.goto('/console/');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await shot(page, `sign-in-${width}`);
      await checkAccessibility(page, `sign-in-${width}`);
      await signInHolder(page);
      await shot(page, `overview-${width}`);
      await checkAccessibility(page, `overview-${width}`);
      await page.goto('/console/#/tasks');
      await page.locator('.previews img').first().waitFor();
      await shot(page, `tasks-${width}`);
      await checkAccessibility(page, `tasks-${width}`);
      await context.close();

      const operator = await newPage(viewport);
      await signInOperator(operator.page);
      await operator.page.getByRole('img', { name: 'billed calls per day' }).waitFor();
      await shot(operator.page, `operator-totals-${width}`);
      await checkAccessibility(operator.page, `operator-totals-${width}`);
      await operator.page.goto('/console/#/channels');
      await operator.page.getByRole('cell', { name: 'simulator' }).first().waitFor();
      await operator.page.getByRole('button', { name: 'Test' }).first().click();
      await operator.page.getByText(/^OK in \d+ ms/).waitFor();
      await shot(operator.page, `operator-channels-${width}`);
      await checkAccessibility(operator.page, `operator-channels-${width}`);
      await operator.page.goto('/console/#/accounts');
      await operator.page.getByTestId(`account-${account.user.name}`).waitFor();
      await shot(operator.page, `operator-accounts-${width}`);
      await checkAccessibility(operator.page, `operator-accounts-${width}`);
      await operator.page.goto('/console/#/prices');
      await operator.page.getByRole('cell', { name: 'imggen-2', exact: true }).waitFor();
      await shot(operator.page, `operator-prices-${width}`);
      await checkAccessibility(operator.page, `operator-prices-${width}`);
      await operator.context.close();
    }
    expect(fs.readdirSync(SCREENSHOTS).filter((f) => f.endsWith('.png')).length).toBeGreaterThanOrEqual(14);
    // Every main page, at both widths, passes axe-core's WCAG 2 A/AA checks without a serious finding.
    expect(a11yProblems).toEqual([]);
  }, 90_000);
});
