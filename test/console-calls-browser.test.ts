import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { insertCalls, type CallRow } from '../src/modules/calls/calls.repo.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { axeProblems } from './support/axe.ts';
import { haveChromium, launchChromium, signInAsHolder, signInAsOperator } from './support/browser.ts';
import { freePort } from './support/gateway-process.ts';

// The Calls pages in Chromium against a real port. The holder's account makes a refused call (402,
// while empty), a text call and a task submit; another account makes a call of its own. The holder
// sees only theirs, filters them by status and opens one; the operator sees every account's with the
// channel, and filters by account. The holder's key logs bodies: both open a call's request and
// answer. Both pages pass axe at desktop and phone widths, the bodies open.

const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? path.resolve(process.env.SCREENSHOTS_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'gw-screenshots-'));
const PASSWORD = 'browser-test-password';
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } };
const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

let t: TestApp;
let base = '';
let browser: Awaited<ReturnType<typeof launchChromium>>;
let holder: Awaited<ReturnType<typeof seedAccount>> & { email: string };
let other: Awaited<ReturnType<typeof seedAccount>>;
const ids = { refused: '', text: '', submit: '', other: '', task: '' };

const messages = { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }] };
async function call(url: string, key: string, body: object) {
  const res = await request(`${base}${url}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.body.json()) as { data?: { task_id: string }[] };
  return { status: res.statusCode, id: String(res.headers['x-request-id']), answer };
}
/** Waits for a call's log row: it is written once the response has ended. */
async function logged(id: string) {
  for (let i = 0; i < 100; i++) {
    if ((await t.app.inject({ method: 'GET', url: `/admin/calls/${id}`, headers: adminHeaders })).statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no call log row ${id}`);
}

beforeAll(async () => {
  if (!consoleBuilt) throw new Error('The console is not built: npm test builds it first (pretest), or run npm run build:console');
  if (!haveChromium) return;
  const port = await freePort();
  base = `http://localhost:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base, CONSOLE_SIGNIN_RPM: '1000' });
  await t.app.listen({ port, host: '127.0.0.1' });
  const seeded = await seedAccount(t.ctx, 0);
  holder = { ...seeded, email: `calls-${seeded.user.id.toLowerCase()}@example.com` };
  other = await seedAccount(t.ctx, 5);
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${holder.user.id}/console-credentials`, headers: adminHeaders, payload: { email: holder.email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  const logsBodies = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${holder.keyId}`, headers: adminHeaders, payload: { log_bodies: true } });
  expect(logsBodies.json().log_bodies).toBe(true);

  const refused = await call('/v1/messages', holder.key, messages);
  expect(refused.status).toBe(402);
  const topup = await t.app.inject({ method: 'POST', url: `/admin/users/${holder.user.id}/topup`, headers: adminHeaders, payload: { amount: 20 } });
  expect(topup.statusCode, topup.body).toBe(200);
  const text = await call('/v1/messages', holder.key, messages);
  expect(text.status).toBe(200);
  const submit = await call('/v1/images/generations', holder.key, { prompt: 'a lighthouse' });
  expect(submit.status).toBe(200);
  const others = await call('/v1/messages', other.key, messages);
  expect(others.status).toBe(200);
  Object.assign(ids, { refused: refused.id, text: text.id, submit: submit.id, other: others.id, task: submit.answer.data![0]!.task_id });
  for (const id of [ids.refused, ids.text, ids.submit, ids.other]) await logged(id);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function newPage(viewport = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, baseURL: base });
  const page = await context.newPage();
  return { context, page };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
const row = (page: Page, id: string) => page.getByTestId(`call-${id}`);
const rows = (page: Page) => page.getByRole('region', { name: 'Calls list' }).locator('tbody tr');
/** Opens the call detail's bodies and waits for both. */
async function openBodies(page: Page) {
  const bodies = page.getByTestId('call-bodies');
  await bodies.getByText('Request and answer bodies').click();
  await bodies.getByTestId('call-body-response').filter({ hasText: /./ }).waitFor();
  return bodies;
}

const filterBy = async (page: Page, fill: (form: ReturnType<Page['getByRole']>) => Promise<unknown>) => {
  const form = page.getByRole('form', { name: 'Filter calls' });
  await fill(form);
  await form.getByRole('button', { name: 'Filter' }).click();
};

describe.skipIf(!haveChromium)(`the Calls pages in Chromium [${backendName}]`, () => {
  it("the holder sees their own calls, never another account's nor a channel; status filters; the detail has usage and cost", async () => {
    const { context, page } = await newPage();
    await signInAsHolder(page, holder.email, PASSWORD);
    await page.getByRole('link', { name: 'Calls' }).click();
    await row(page, ids.text).waitFor();
    expect(await rows(page).count()).toBe(3);
    await expect.poll(() => row(page, ids.other).count()).toBe(0);
    // Newest first: the submit, the text call, then the refusal.
    expect(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')))).toEqual([`call-${ids.submit}`, `call-${ids.text}`, `call-${ids.refused}`]);
    expect(await row(page, ids.refused).getByTestId('call-status').textContent()).toBe('refused 402');
    expect(await page.locator('main').textContent()).not.toMatch(/channel|simulator/i);

    await filterBy(page, (form) => form.getByLabel('Status').selectOption('refused'));
    await expect.poll(() => rows(page).count()).toBe(1);
    await row(page, ids.refused).waitFor();
    await filterBy(page, (form) => form.getByLabel('Status').selectOption('ok'));
    await expect.poll(() => rows(page).count()).toBe(2);
    await filterBy(page, (form) => form.getByLabel('Model').fill('chatgen-4-haiku'));
    await expect.poll(() => rows(page).count()).toBe(1);

    await row(page, ids.text).getByRole('button').click();
    const detail = page.getByTestId('call-detail');
    await detail.getByText(ids.text).waitFor();
    const usage = detail.getByTestId('call-usage');
    for (const label of ['Input', 'Cache read', 'Cache write', 'Output']) await usage.getByRole('rowheader', { name: label }).waitFor();
    const call = (await t.app.inject({ method: 'GET', url: `/admin/calls/${ids.text}`, headers: adminHeaders })).json();
    expect(call.cost.total).toBeGreaterThan(0);
    expect(await usage.getByTestId('call-cost').textContent()).toMatch(/^(< )?\$\d/);
    expect(await usage.textContent()).toContain(String(call.usage.output));
    await shot(page, 'holder-call-detail-desktop');

    // The refusal shows its error; the submit links its task.
    await filterBy(page, async (form) => {
      await form.getByLabel('Model').fill('');
      await form.getByLabel('Status').selectOption('');
    });
    await row(page, ids.refused).getByRole('button').click();
    await page.getByTestId('call-error').filter({ hasText: /./ }).waitFor();
    await page.getByTestId('call-detail').getByText('payment_required').waitFor();
    await row(page, ids.submit).getByRole('button').click();
    await page.getByTestId('call-task').filter({ hasText: ids.task }).waitFor();
    await context.close();
  });

  it('the operator sees the channel column, filters by account, and the detail names the channel', async () => {
    const { context, page } = await newPage();
    await signInAsOperator(page, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Calls' }).click();
    await row(page, ids.other).waitFor();
    await page.getByRole('columnheader', { name: 'Channel' }).waitFor();
    expect(await row(page, ids.text).getByTestId('call-channel').textContent()).toMatch(/\(simulator\)$/);
    expect(await row(page, ids.refused).getByTestId('call-channel').textContent()).toBe('—');

    await filterBy(page, (form) => form.getByLabel(/^Account/).selectOption({ label: holder.user.name }));
    await expect.poll(() => rows(page).count()).toBe(3);
    expect(await row(page, ids.other).count()).toBe(0);
    await filterBy(page, (form) => form.getByLabel('Status').selectOption('refused'));
    await expect.poll(() => rows(page).count()).toBe(1);

    await filterBy(page, async (form) => {
      await form.getByLabel(/^Account/).selectOption({ label: other.user.name });
      await form.getByLabel('Status').selectOption('');
    });
    await expect.poll(() => rows(page).count()).toBe(1);
    await row(page, ids.other).getByRole('button').click();
    await page.getByTestId('call-detail').getByText(/\(simulator, /).waitFor();
    // That account's key keeps no bodies: the detail offers none.
    expect(await page.getByTestId('call-bodies').count()).toBe(0);
    await context.close();
  });

  it('the operator pages through an account of 60 calls with More, and a time range narrows it', async () => {
    const busy = await seedAccount(t.ctx, 1);
    // A minute apart, each at half past: datetime-local has minute precision.
    const twoDaysAgo = Math.floor((Date.now() - 2 * 86_400_000) / 60_000) * 60_000 + 30_000;
    const old = (i: number): CallRow => ({
      id: `busy-${busy.user.id}-${i}`, time: twoDaysAgo - i * 60_000, user_id: busy.user.id, key_id: busy.keyId, model: 'chatgen-4-haiku', surface: 'messages',
      channel_id: null, channel_name: null, channel_type: null, status: 'ok', http_status: 200, error: null, latency_ms: 1, first_token_ms: null, usage: null, cost: null, task_id: null, bodies: null,
    });
    await insertCalls(t.ctx.db, Array.from({ length: 60 }, (_, i) => old(i)));
    expect((await call('/v1/messages', busy.key, messages)).status).toBe(200);
    // datetime-local takes the reader's own clock, which the browser shares with this process.
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

    const { context, page } = await newPage();
    await signInAsOperator(page, ADMIN_TOKEN);
    await page.goto('/console/#/calls');
    await filterBy(page, (form) => form.getByLabel(/^Account/).selectOption({ label: busy.user.name }));
    await expect.poll(() => rows(page).count()).toBe(50);
    await page.getByRole('button', { name: 'More' }).click();
    await expect.poll(() => rows(page).count()).toBe(61);
    await row(page, `busy-${busy.user.id}-59`).waitFor();
    expect(await page.getByRole('button', { name: 'More' }).count()).toBe(0);

    await filterBy(page, (form) => form.getByLabel('From', { exact: true }).fill(local(Date.now() - 86_400_000)));
    await expect.poll(() => rows(page).count()).toBe(1);
    await filterBy(page, async (form) => {
      await form.getByLabel('From', { exact: true }).fill('');
      await form.getByLabel('To', { exact: true }).fill(local(twoDaysAgo - 10 * 60_000));
    });
    // Before a time 10½ minutes older than the newest old call: those 11 minutes older and more.
    await expect.poll(() => rows(page).count()).toBe(49);
    await row(page, `busy-${busy.user.id}-11`).waitFor();
    expect(await row(page, `busy-${busy.user.id}-10`).count()).toBe(0);
    await context.close();
  });

  it("the key forms turn body capture on and off: a holder's new key, and an existing key's limits", async () => {
    const { context, page } = await newPage();
    await signInAsHolder(page, holder.email, PASSWORD);
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Name', { exact: true }).fill('disputes');
    await form.getByLabel('Log request and answer bodies').check();
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('key-disputes').getByTestId('key-policy').filter({ hasText: 'bodies logged' }).waitFor();
    const keys = (await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${holder.user.id}`, headers: adminHeaders })).json().data as { id: string; name: string; log_bodies: boolean }[];
    expect(keys.find((k) => k.name === 'disputes')!.log_bodies).toBe(true);

    await page.getByRole('button', { name: 'Limits of disputes' }).click();
    const limits = page.getByRole('form', { name: 'Limits of key disputes' });
    const box = limits.getByLabel('Log request and answer bodies');
    expect(await box.isChecked()).toBe(true);
    await box.uncheck();
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => page.getByTestId('key-disputes').getByTestId('key-policy').textContent()).not.toContain('bodies logged');
    const after = (await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${holder.user.id}`, headers: adminHeaders })).json().data as { name: string; log_bodies: boolean }[];
    expect(after.find((k) => k.name === 'disputes')!.log_bodies).toBe(false);
    await context.close();
  });

  it('both pages pass the axe-core WCAG A/AA checks at desktop and phone widths, and fit a phone', async () => {
    const problems: string[] = [];
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      const holderPage = await newPage(viewport);
      await signInAsHolder(holderPage.page, holder.email, PASSWORD);
      await holderPage.page.goto('/console/#/calls');
      await row(holderPage.page, ids.text).getByRole('button').click();
      await holderPage.page.getByTestId('call-usage').waitFor();
      const bodies = await openBodies(holderPage.page);
      expect(JSON.parse((await bodies.getByTestId('call-body-request').textContent())!)).toEqual(messages);
      expect(await bodies.getByTestId('call-body-response').textContent()).toContain('"type": "message"');
      await shot(holderPage.page, `holder-calls-${width}`);
      problems.push(...(await axeProblems(holderPage.page, `holder-calls-${width}`)));
      expect(await holderPage.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await holderPage.context.close();

      const operatorPage = await newPage(viewport);
      await signInAsOperator(operatorPage.page, ADMIN_TOKEN);
      await operatorPage.page.goto('/console/#/calls');
      await row(operatorPage.page, ids.text).getByRole('button').click();
      await operatorPage.page.getByTestId('call-usage').waitFor();
      await openBodies(operatorPage.page);
      await shot(operatorPage.page, `operator-calls-${width}`);
      problems.push(...(await axeProblems(operatorPage.page, `operator-calls-${width}`)));
      expect(await operatorPage.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await operatorPage.context.close();
    }
    expect(problems).toEqual([]);
  }, 90_000);
});
