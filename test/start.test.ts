import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, stopAllGateways } from './helpers/gateway-process.ts';

// Starting the gateway the way `npm start` does (`tsx src/main.ts`) on a brand-new SQLite file:
// what a newcomer sees, what production sees, a bad configuration, and a graceful SIGTERM.

const dirs: string[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A brand-new, empty SQLite database in a temp directory of its own. */
function emptySqlite(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-start-'));
  dirs.push(dir);
  return `sqlite:${path.join(dir, 'gateway.db')}`;
}

const KEY = /sk-gw-[A-Za-z0-9_-]{20,}/;
const NO_DEMO_LINE = /Gateway listening on /;
// `npm start` sets neither; vitest itself sets NODE_ENV=test, so remove it from the child's environment.
const asNpmStart = { GATEWAY_DEMO: undefined, NODE_ENV: undefined };

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Accepts a TCP connection on the port? */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('first start of an empty database (npm start: src/main.ts)', () => {
  it('prints a demo key on stdout that works over HTTP; a second start prints none and the key still works', async () => {
    const DATABASE_URL = emptySqlite();
    const first = await startGateway({ env: { DATABASE_URL, ...asNpmStart } });
    const [key] = await first.waitForOutput(KEY);
    expect(first.stdout()).toContain(key);
    expect(first.stdout()).toContain(`curl -s ${first.url}/v1/balance -H "Authorization: Bearer ${key}"`);

    const balance = await first.call('GET', '/v1/balance', bearer(key));
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({ success: true, unlimited_quota: true });
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const second = await startGateway({ env: { DATABASE_URL, ...asNpmStart } });
    await second.waitForOutput(NO_DEMO_LINE);
    expect(second.output()).not.toMatch(KEY);
    const again = await second.call('GET', '/v1/balance', bearer(key));
    expect(again).toMatchObject({ status: 200, body: { success: true } });
    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 40_000);

  it('NODE_ENV=production prints no demo key', async () => {
    const gateway = await startGateway({ env: { DATABASE_URL: emptySqlite(), GATEWAY_DEMO: undefined, NODE_ENV: 'production' } });
    await gateway.waitForOutput(NO_DEMO_LINE);
    expect(gateway.output()).not.toMatch(KEY);
    expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 30_000);
});

describe('an invalid configuration stops the start', () => {
  it.concurrent.each([
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['BILLING_UNIT', 'eur'],
  ])('%s=%s: exits non-zero with a message naming the variable', async (name, value) => {
    const gateway = await startGateway({ env: { DATABASE_URL: emptySqlite(), ...asNpmStart, [name]: value }, waitForHealth: false });
    const status = await gateway.exited;
    expect(status.code).not.toBe(0);
    expect(status.code).not.toBeNull();
    expect(gateway.stderr()).toContain(name);
    expect(gateway.stderr()).toContain(value);
    expect(gateway.output()).not.toMatch(KEY);
  }, 30_000);
});

describe('graceful shutdown', () => {
  it('SIGTERM: the port stops accepting, an in-flight request still completes, exit code 0', async () => {
    const gateway = await startGateway({ env: { DATABASE_URL: emptySqlite(), GATEWAY_DEMO: '1' } });
    const [key] = await gateway.waitForOutput(KEY);
    // A synchronous text call the simulator holds for 1.5 s before answering.
    const started = Date.now();
    const inFlight = gateway.call('POST', '/v1/messages', { 'x-api-key': key }, {
      model: 'chatgen-4-haiku',
      max_tokens: 32,
      messages: [{ role: 'user', content: 'slow one [sim:delay=1.5]' }],
    });
    await new Promise((r) => setTimeout(r, 400));
    const sigtermAt = Date.now();
    gateway.kill('SIGTERM');

    // While the slow request is still running, new connections are refused.
    let refused = false;
    for (let i = 0; i < 20 && !refused; i++) {
      refused = !(await accepts(gateway.port));
      if (!refused) await new Promise((r) => setTimeout(r, 25));
    }
    expect(refused).toBe(true);
    expect(gateway.alive()).toBe(true);

    const res = await inFlight;
    const answeredAt = Date.now();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text' }] });
    expect(answeredAt).toBeGreaterThan(sigtermAt);
    expect(answeredAt - started).toBeGreaterThanOrEqual(1400);

    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    expect(await accepts(gateway.port)).toBe(false);
  }, 30_000);
});
