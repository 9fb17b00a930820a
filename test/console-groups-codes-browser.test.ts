import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';

// The operator's Codes and Groups pages in Chromium against a real port: a batch made in the page is
// redeemed by a holder in the console, a revoked one is refused; a group made in the page and an
// account moved into it show in the API; the account disabled from its row answers 401 until enabled.
// Both pages pass axe-core's WCAG A/AA checks at both widths.

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-test-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

let t: TestApp;
let base = '';
let browser: Awaited<ReturnType<typeof launchChromium>>;
let account: Awaited<ReturnType<typeof seedAccount>> & { email: string };

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  const port = await freePort();
  base = `http://localhost:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base, CONSOLE_SIGNIN_RPM: '1000' });
  await t.app.listen({ port, host: '127.0.0.1' });
  const seeded = await seedAccount(t.ctx, 20);
  account = { ...seeded, email: `codes-${seeded.user.id.toLowerCase()}@example.com` };
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email: account.email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function newPage(viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: base });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** Redeems `code` on the holder's overview and waits for the answer (a status or an alert). */
async function redeemInConsole(page: Page, code: string) {
  await page.getByLabel('Redemption code').fill(code);
  await page.getByRole('button', { name: 'Redeem' }).click();
  await page.getByRole('status').or(page.getByRole('alert')).filter({ hasText: /Redeemed|revoked/ }).waitFor();
}

describe.skipIf(!haveChromium)(`operator Codes and Groups pages in Chromium [${backendName}]`, () => {
  it('the operator makes a batch in the page and sees the codes once; a holder redeems one; a revoked one is refused', async () => {
    const operator = await newPage();
    await signInAsOperator(operator.page, ADMIN_TOKEN);
    await operator.page.getByRole('link', { name: 'Codes' }).click();
    const form = operator.page.getByRole('form', { name: 'Make codes' });
    await form.getByLabel('Amount per code (USD)').fill('7.5');
    await form.getByLabel('How many codes').fill('2');
    await form.getByLabel('Note').fill('browser batch');
    await form.getByRole('button', { name: 'Make codes' }).click();
    const shown = operator.page.getByTestId('new-codes').getByRole('listitem');
    await expect.poll(() => shown.count()).toBe(2);
    await operator.page.getByText('Shown once:').waitFor();
    const codes = await Promise.all([0, 1].map(async (i) => ({ id: (await shown.nth(i).getAttribute('data-code-id'))!, code: (await shown.nth(i).locator('code').textContent())! })));
    expect(codes.every((c) => c.code.startsWith('gw-'))).toBe(true);
    await operator.page.getByRole('button', { name: 'Copy all' }).click();
    await operator.page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await operator.page.evaluate(() => navigator.clipboard.readText())).toBe(`${codes[0]!.code}\n${codes[1]!.code}`);
    // The list has both, unused, with the note; never the codes themselves.
    for (const c of codes) await operator.page.getByTestId(`code-${c.id}`).filter({ hasText: 'browser batch' }).getByTestId('code-use').filter({ hasText: '0 / 1' }).waitFor();
    expect(await operator.page.getByRole('region', { name: 'Redemption codes' }).textContent()).not.toContain(codes[0]!.code);
    await shot(operator.page, 'operator-codes-made-desktop');

    const holder = await newPage();
    await signInAsHolder(holder.page, account.email, PASSWORD);
    const dollars = async () => Number((await holder.page.getByTestId('remain-balance').textContent())!.replace(/[$,]/g, ''));
    const before = await dollars();
    await redeemInConsole(holder.page, codes[0]!.code);
    await holder.page.getByTestId('remain-balance').filter({ hasText: `$${(before + 7.5).toFixed(2)}` }).waitFor();

    // The operator sees the use, then revokes the other code; the holder's try is refused.
    await operator.page.reload();
    await operator.page.getByTestId(`code-${codes[0]!.id}`).getByTestId('code-use').filter({ hasText: '1 / 1' }).waitFor();
    await operator.page.getByRole('button', { name: `Revoke ${codes[1]!.id}` }).click();
    await operator.page.getByTestId(`code-${codes[1]!.id}`).getByText('revoked').waitFor();
    await redeemInConsole(holder.page, codes[1]!.code);
    await holder.page.getByRole('alert').filter({ hasText: 'This code has been revoked' }).waitFor();
    expect(await dollars()).toBe(before + 7.5);
    const api = await t.app.inject({ method: 'GET', url: `/admin/users?limit=1000`, headers: adminHeaders });
    expect(api.json().data.find((u: { id: string }) => u.id === account.user.id).balance).toBe(before + 7.5);
    await holder.context.close();
    await operator.context.close();
  });

  it('the operator makes a 0.5 group in the page, a bad override shows the 400, and moving an account halves its /v1/models prices; disabling it stops its keys until it is enabled', async () => {
    const models = async () => {
      const res = await request(`${base}/v1/models`, { headers: account.auth });
      const body = (await res.body.json()) as { data: { id: string; pricing: unknown }[] };
      return Object.fromEntries(body.data.map((m) => [m.id, m.pricing]));
    };
    expect((await models())['imggen-2']).toEqual({ per_image: { '1k': 0.02, '2k': 0.04, '4k': 0.08 } });

    const { context, page } = await newPage();
    await signInAsOperator(page, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Groups' }).click();
    const form = page.getByRole('form', { name: 'Group' });
    await form.getByLabel('Name').fill('half');
    await form.getByLabel('Price multiplier').fill('0.5');
    await form.getByLabel(/^Price overrides/).fill('{ "no-such-model": { "per_asset": 1 } }');
    await form.getByRole('button', { name: 'Save group' }).click();
    await page.getByRole('alert').filter({ hasText: 'prices/no-such-model: no such model' }).waitFor();
    await form.getByLabel(/^Price overrides/).fill('');
    await form.getByRole('button', { name: 'Save group' }).click();
    await page.getByTestId('group-half').getByTestId('group-multiplier').filter({ hasText: '× 0.5' }).waitFor();
    await shot(page, 'operator-groups-desktop');

    await page.getByRole('link', { name: 'Accounts' }).click();
    const move = page.getByRole('form', { name: `Group of ${account.user.name}` });
    await move.getByLabel('Customer group').selectOption('half');
    await move.getByRole('button', { name: 'Move' }).click();
    await page.getByTestId(`account-${account.user.name}`).getByTestId('account-group').filter({ hasText: 'group half' }).waitFor();
    const user = (await t.app.inject({ method: 'GET', url: '/admin/users?limit=1000', headers: adminHeaders })).json().data.find((u: { id: string }) => u.id === account.user.id);
    expect(user.group).toBe('half');
    await expect.poll(async () => (await models())['imggen-2'], { timeout: 5000 }).toEqual({ per_image: { '1k': 0.01, '2k': 0.02, '4k': 0.04 } });

    // Disabling the account (after a confirmation) stops its keys; enabling it gives them back.
    const row = page.getByTestId(`account-${account.user.name}`);
    await row.getByRole('button', { name: 'Disable account' }).click();
    await row.getByTestId('account-disabled').waitFor();
    const balance = () => t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
    expect((await balance()).statusCode).toBe(401);
    await row.getByRole('button', { name: 'Enable account' }).click();
    await row.getByTestId('account-disabled').waitFor({ state: 'detached' });
    expect((await balance()).statusCode).toBe(200);
    await context.close();
  });

  it('both pages pass the axe-core WCAG A/AA checks at desktop and phone widths', async () => {
    const problems: string[] = [];
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await signInAsOperator(page, ADMIN_TOKEN);
      await page.goto('/console/#/codes');
      const form = page.getByRole('form', { name: 'Make codes' });
      await form.getByLabel('Amount per code (USD)').fill('1');
      await form.getByRole('button', { name: 'Make codes' }).click();
      await page.getByTestId('new-codes').waitFor();
      await page.getByRole('region', { name: 'Redemption codes' }).getByRole('button', { name: /^Revoke / }).first().waitFor();
      await shot(page, `operator-codes-${width}`);
      problems.push(...(await axeProblems(page, `operator-codes-${width}`)));
      await page.goto('/console/#/groups');
      await page.getByTestId('group-default').waitFor();
      await shot(page, `operator-groups-${width}`);
      problems.push(...(await axeProblems(page, `operator-groups-${width}`)));
      await page.goto('/console/#/accounts');
      await page.getByRole('form', { name: `Group of ${account.user.name}` }).waitFor();
      problems.push(...(await axeProblems(page, `operator-accounts-${width}`)));
      await context.close();
    }
    expect(problems).toEqual([]);
  }, 90_000);
});
