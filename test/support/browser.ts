import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
