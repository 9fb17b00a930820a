import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';
import { waitUntil } from './support/receiver.ts';

// Issue 26 item 11, a newcomer's first hour in the console, in Chromium against a real port:
// amounts carry the billing unit at one precision, a key shows the quota set and what is left, the
// keys table fits a phone, a task shows its key, prompt and a refused callback, the operator's count
// says what it counts, chart labels stay readable on a phone, the signing secret can be copied, and
// there is a favicon. Screenshots at both widths go to a temporary folder unless SCREENSHOTS_DIR is set.

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-test-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const PROMPT = 'a lighthouse at dusk, long exposure';
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

interface Gateway {
  t: TestApp;
  base: string;
  account: Awaited<ReturnType<typeof seedAccount>> & { email: string };
}
let usd: Gateway;
let credits: Gateway;
let browser: Awaited<ReturnType<typeof launchChromium>>;

async function startGateway(env: Record<string, string>, balance: number, workers: boolean): Promise<Gateway> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const t = await createTestApp({ PUBLIC_BASE_URL: base, CONSOLE_SIGNIN_RPM: '1000', SIMULATOR_LATENCY_MS: '50', ...env }, undefined, { workers });
  await t.app.listen({ port, host: '127.0.0.1' });
  const seeded = await seedAccount(t.ctx, balance);
  const account = { ...seeded, email: `polish-${seeded.user.id.toLowerCase()}@example.com` };
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email: account.email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  return { t, base, account };
}

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  usd = await startGateway({}, 9.385817, true);
  credits = await startGateway({ BILLING_UNIT: 'credits' }, 1234.5, false);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await usd?.t.close();
  await credits?.t.close();
});

async function newPage(gw: Gateway, viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: gw.base });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.base });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page };
}

const signInHolder = (page: Page, gw: Gateway) => signInAsHolder(page, gw.account.email, PASSWORD);

const signInOperator = (page: Page) => signInAsOperator(page, ADMIN_TOKEN);

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

async function post(gw: Gateway, url: string, headers: Record<string, string>, body: object) {
  const res = await request(`${gw.base}${url}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.body.json()) as any;
  expect([200, 201], JSON.stringify(json)).toContain(res.statusCode);
  return json;
}

/** No page heading repeated by a section heading under it. */
async function repeatedHeadings(page: Page) {
  return page.evaluate(() => {
    const h1 = document.querySelector('main h1')?.textContent?.trim();
    return [...document.querySelectorAll('main h2')].map((h) => h.textContent?.trim()).filter((text) => text === h1);
  });
}

let limitedKey: { id: string; key: string };
let taskId: string;

describe.skipIf(!haveChromium)(`console polish (issue 26 item 11) in Chromium [${backendName}]`, () => {
  it('a task with a refused callback: its key, prompt and the refusal are in the task view, and the heading is not repeated', async () => {
    limitedKey = await post(usd, '/admin/keys', adminHeaders, { user_id: usd.account.user.id, name: 'limited-key', quota: 5 });
    const submitted = await post(usd, '/v1/images/generations', { authorization: `Bearer ${limitedKey.key}` }, { model: 'imggen-2', prompt: PROMPT, webhook: 'ftp://hooks.example.com' });
    taskId = submitted.data[0].task_id;
    await waitUntil('the task to end', async () => {
      const res = await usd.t.app.inject({ method: 'GET', url: `/admin/tasks/${taskId}/deliveries`, headers: adminHeaders });
      const task = await usd.t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: { authorization: `Bearer ${limitedKey.key}` } });
      return res.json().data.length > 0 && task.json().data?.status === 'completed';
    }, 20_000);

    const { context, page } = await newPage(usd);
    await signInHolder(page, usd);
    await page.getByRole('link', { name: 'Tasks' }).click();
    const task = page.getByTestId(`task-${taskId}`);
    await task.getByText('completed').waitFor();
    expect(await repeatedHeadings(page)).toEqual([]);
    expect(await task.getByTestId('task-key').textContent()).toMatch(new RegExp(`^Key limited-key \\(${limitedKey.key.slice(0, 10)}`));
    expect(await task.getByTestId('task-prompt').textContent()).toContain(PROMPT);
    expect(await task.getByTestId('task-callback').textContent()).toMatch(/refused.*scheme ftp: is not http or https/);
    await task.getByRole('button', { name: 'Callback attempts' }).click();
    await task.getByRole('cell', { name: 'refused' }).waitFor();
    await task.getByRole('cell', { name: /scheme ftp: is not http or https/ }).waitFor();
    await context.close();
  });

  it('amounts carry the billing unit at one precision (USD), and a limited key shows the quota set and what is left', async () => {
    const { context, page } = await newPage(usd);
    await signInHolder(page, usd);
    const keys = (await page.evaluate(() => fetch('/console/api/keys').then((r) => r.json()))) as { data: { id: string; quota: number; quota_used: number }[] };
    const key = keys.data.find((k) => k.id === limitedKey.id)!;
    expect(key.quota_used).toBeGreaterThan(0);
    expect(key.quota + key.quota_used).toBeCloseTo(5, 9);
    const row = page.getByTestId('key-limited-key');
    expect(await row.getByTestId('quota-set').textContent()).toBe('$5.00');
    expect(await row.getByTestId('quota-left').textContent()).toBe(`$${key.quota.toFixed(2)}`);
    expect(await page.getByTestId('key-default').getByTestId('quota-set').textContent()).toBe('unlimited');

    const balance = (await page.getByTestId('remain-balance').textContent())!;
    expect(balance).toMatch(/^\$9\.3\d$/);
    const amounts = await page.locator('[data-money]').allTextContents();
    expect(amounts.length).toBeGreaterThanOrEqual(5);
    for (const amount of amounts) expect(amount).toMatch(/^(\$\d{1,3}(,\d{3})*\.\d{2}|< \$0\.01)$/);
    await context.close();
  });

  it('amounts carry the billing unit when it is credits', async () => {
    const { context, page } = await newPage(credits);
    await signInHolder(page, credits);
    expect(await page.getByTestId('remain-balance').textContent()).toBe('1,234.50 credits');
    expect(await page.getByTestId('used-balance').textContent()).toBe('0.00 credits');
    await context.close();
  });

  it('on a phone the keys table fits: the prefix stays on one line and Disable/Delete are on screen', async () => {
    const { context, page } = await newPage(usd, VIEWPORTS.phone);
    await signInHolder(page, usd);
    const row = page.getByTestId('key-limited-key');
    const prefix = row.locator('code');
    const box = (await prefix.boundingBox())!;
    const lineHeight = await prefix.evaluate((el) => parseFloat(getComputedStyle(el).fontSize) * 1.6);
    expect(box.height).toBeLessThan(lineHeight);
    for (const name of ['Disable', 'Delete key limited-key']) {
      const button = (await row.getByRole('button', { name }).boundingBox())!;
      expect(button.x).toBeGreaterThanOrEqual(0);
      expect(button.x + button.width).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await context.close();
  });

  it('the signing secret has a Copy button that puts the whole secret on the clipboard', async () => {
    const { context, page } = await newPage(usd);
    await signInHolder(page, usd);
    await page.getByRole('link', { name: 'Callbacks' }).click();
    await page.getByTestId('signing-secret').waitFor();
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const secret = await page.evaluate(() => fetch('/console/api/webhook-secret').then((r) => r.json()).then((b: { secret: string }) => b.secret));
    expect(secret).toMatch(/^whsec_/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await context.close();
  });

  it('the operator sees "billed calls", not "requests", and chart labels stay readable and apart on a phone', async () => {
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(usd, viewport);
      await signInOperator(page);
      const chart = page.getByRole('img', { name: 'billed calls per day' });
      await chart.waitFor();
      // The chart is drawn empty (two axis labels) until the days arrive: wait for its day labels.
      await expect.poll(() => chart.locator('text').count(), { timeout: 15_000 }).toBeGreaterThan(3);
      await page.getByText('Billed calls', { exact: true }).first().waitFor();
      expect(await page.getByText('Requests', { exact: true }).count()).toBe(0);
      expect(await repeatedHeadings(page)).toEqual([]);
      const labels = await chart.locator('text').evaluateAll((nodes) => nodes.map((n) => { const r = n.getBoundingClientRect(); return { x: r.x, right: r.right, y: r.y, height: r.height }; }));
      expect(labels.length).toBeGreaterThan(3);
      // Rendered at least 11 px tall, whatever the screen width (the chart used to be scaled down).
      for (const label of labels) expect(label.height, `${width}: ${JSON.stringify(label)}`).toBeGreaterThanOrEqual(11);
      const bottom = labels.filter((l) => l.y === Math.max(...labels.map((m) => m.y))).sort((a, b) => a.x - b.x);
      for (let i = 1; i < bottom.length; i++) expect(bottom[i]!.x, `${width}: day labels overlap`).toBeGreaterThan(bottom[i - 1]!.right);
      await shot(page, `polish-operator-totals-${width}`);
      await context.close();
    }
  });

  it('favicon.ico answers at / and /console/, and a page load asks for nothing that 404s', async () => {
    for (const url of ['/favicon.ico', '/console/favicon.ico']) {
      const res = await request(`${usd.base}${url}`);
      const body = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode, url).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^image\//);
      expect(body.length).toBeGreaterThan(0);
    }
    const { context, page } = await newPage(usd);
    const missing: string[] = [];
    page.on('response', (res) => {
      if (res.status() === 404) missing.push(res.url());
    });
    await signInHolder(page, usd);
    await page.waitForLoadState('networkidle');
    expect(missing).toEqual([]);
    await context.close();
  });

  it('saves screenshots of the polished pages at desktop and phone widths', async () => {
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await newPage(usd, viewport);
      await signInHolder(page, usd);
      await page.getByTestId('key-limited-key').waitFor();
      await shot(page, `polish-overview-${width}`);
      await page.goto('/console/#/tasks');
      await page.getByTestId(`task-${taskId}`).getByRole('button', { name: 'Callback attempts' }).click();
      await page.getByRole('cell', { name: 'refused' }).waitFor();
      await shot(page, `polish-tasks-${width}`);
      await page.goto('/console/#/settings');
      await page.getByTestId('signing-secret').waitFor();
      await page.getByLabel(/Alert below/).waitFor();
      await shot(page, `polish-settings-${width}`);
      await context.close();
    }
    expect(fs.readdirSync(SCREENSHOTS).filter((f) => f.startsWith('polish-')).length).toBeGreaterThanOrEqual(8);
  }, 60_000);
});
