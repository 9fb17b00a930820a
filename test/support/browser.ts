import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

// Headless Chromium from Debian's `chromium` package (installed by .ci/run), driven by playwright-core.
// Without it the browser suites are skipped on a workstation, and fail under CI=true.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = fs.existsSync(CHROMIUM_PATH);

if (!haveChromium && process.env.CI === 'true') {
  throw new Error(`CI=true but no Chromium at ${CHROMIUM_PATH}: .ci/run installs Debian's chromium package`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // The machine's network is closed: background services would only fail their lookups.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Signs in to the console as an account holder and waits for the overview. */
export async function signInAsHolder(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/console/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** Signs in to the console as the operator and waits for the totals. */
export async function signInAsOperator(page: Page, adminToken: string): Promise<void> {
  await page.goto('/console/');
  await page.getByRole('tab', { name: 'Operator' }).click();
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Totals' }).waitFor();
}
