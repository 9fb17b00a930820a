import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';

// Issue 25 in the console, in Chromium against a real port: a holder's key limits and usage
// export, the low-balance alert setting, and the operator's view of an account's keys. Screenshots
// at both widths go to a temporary folder unless SCREENSHOTS_DIR is set.

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
  t = await createTestApp({ PUBLIC_BASE_URL: base, CONSOLE_SIGNIN_RPM: '1000', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' }, undefined, { workers: true });
  await t.app.listen({ port, host: '127.0.0.1' });
  const seeded = await seedAccount(t.ctx, 20);
  account = { ...seeded, email: `limits-${seeded.user.id.toLowerCase()}@example.com` };
  await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email: account.email, password: PASSWORD } });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function newPage(viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: base, acceptDownloads: true });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page };
}

const signInHolder = (page: Page) => signInAsHolder(page, account.email, PASSWORD);

const signInOperator = (page: Page) => signInAsOperator(page, ADMIN_TOKEN);

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
const status = async (url: string, key: string, body?: object) => {
  const res = await request(`${base}${url}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  await res.body.dump();
  return res.statusCode;
};

describe.skipIf(!haveChromium)(`key limits, alerts and usage export in Chromium [${backendName}]`, () => {
  it('a holder creates a key limited to one model, the API follows; the operator narrows another key, the holder cannot widen it', async () => {
    const { context, page } = await newPage();
    await signInHolder(page);
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Name', { exact: true }).fill('images-only');
    await form.getByLabel('Models (empty = all)').fill('imggen-2-ext');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!;
    await page.getByTestId('key-images-only').getByTestId('key-policy').filter({ hasText: 'models: imggen-2' }).waitFor();
    expect(await status('/v1/images/generations', secret, { model: 'imggen-2', prompt: 'a cat' })).toBe(200);
    expect(await status('/v1/videos/generations', secret, { model: 'vidgen-2.0', prompt: 'a cat' })).toBe(403);

    // The operator sets limits on the account's seeded key from the Accounts page.
    const operator = await newPage();
    await signInOperator(operator.page);
    await operator.page.getByRole('link', { name: 'Accounts' }).click();
    const row = operator.page.getByTestId(`account-${account.user.name}`);
    await row.getByRole('button', { name: 'Limits of default' }).click();
    const limits = row.getByRole('form', { name: 'Limits of key default' });
    await limits.getByLabel('Models (empty = all)').fill('imggen-2, vidgen-2.0');
    await limits.getByLabel('Allowed addresses (empty = any)').fill('127.0.0.0/8');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await row.getByTestId('admin-key-default').getByTestId('key-policy').filter({ hasText: 'from: 127.0.0.0/8' }).waitFor();
    await shot(operator.page, 'operator-account-key-limits-desktop');
    expect(await status('/v1/messages', account.key, { model: 'chatgen-4-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })).toBe(403);
    await operator.context.close();

    // The holder may narrow it, not widen it.
    await page.reload();
    await page.getByRole('button', { name: 'Limits of default' }).click();
    const own = page.getByRole('form', { name: 'Limits of key default' });
    await own.getByText('Set by the operator').waitFor();
    await own.getByLabel('Models (empty = all)').fill('imggen-2, vidgen-2.0, textgen-2.5-pro');
    await own.getByRole('button', { name: 'Save limits' }).click();
    await own.getByRole('alert').filter({ hasText: 'the operator limits this key' }).waitFor();
    await own.getByLabel('Models (empty = all)').fill('vidgen-2.0');
    await own.getByRole('button', { name: 'Save limits' }).click();
    await page.getByTestId('key-default').getByTestId('key-policy').filter({ hasText: 'models: vidgen-2.0 ·' }).waitFor();
    expect(await status('/v1/images/generations', account.key, { model: 'imggen-2', prompt: 'a cat' })).toBe(403);
    await shot(page, 'overview-key-limits-desktop');
    await context.close();
  });

  it('the holder sets a low-balance alert and downloads the usage CSV', async () => {
    const { context, page } = await newPage();
    await signInHolder(page);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download usage CSV' }).click();
    const file = await (await download).path();
    const rows = parse(fs.readFileSync(file!, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((r) => r.endpoint === '/v1/images/generations' && Number(r.cost) > 0)).toBe(true);

    await page.goto('/console/#/settings');
    const alert = page.getByRole('form', { name: 'Low-balance alert' });
    await alert.getByLabel('Alert below').fill('5');
    await alert.getByLabel('Alert URL').fill('http://127.0.0.1:9/hooks');
    await alert.getByRole('button', { name: 'Save alert' }).click();
    await alert.getByRole('status').waitFor();
    const saved = (await t.app.inject({ method: 'GET', url: '/admin/users?limit=1000', headers: adminHeaders })).json().data.find((u: { id: string }) => u.id === account.user.id);
    expect(saved).toMatchObject({ alert_below: 5, alert_url: 'http://127.0.0.1:9/hooks' });
    await context.close();
  });

  it('screenshots of the new fields and the export at desktop and phone widths', async () => {
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await signInHolder(page);
      await page.getByRole('button', { name: 'Limits of default' }).click();
      await page.getByRole('form', { name: 'Limits of key default' }).waitFor();
      await page.getByRole('link', { name: 'Download usage CSV' }).waitFor();
      await shot(page, `overview-limits-export-${width}`);
      await page.goto('/console/#/settings');
      await page.getByRole('form', { name: 'Low-balance alert' }).waitFor();
      await shot(page, `settings-alert-${width}`);
      await context.close();
      const operator = await newPage(viewport);
      await signInOperator(operator.page);
      await operator.page.goto('/console/#/accounts');
      await operator.page.getByTestId(`account-${account.user.name}`).getByTestId('admin-key-default').waitFor();
      await shot(operator.page, `operator-accounts-keys-${width}`);
      await operator.context.close();
    }
    const shots = fs.readdirSync(SCREENSHOTS).filter((f) => /^(overview-limits-export|settings-alert|operator-accounts-keys)-(desktop|phone)\.png$/.test(f));
    expect(shots).toHaveLength(6);
  }, 90_000);
});
