import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startGateway, stopAllGateways } from './support/gateway-process.ts';

// What a newcomer sees: `npm start` on an empty database prints a key that works at once.

afterAll(() => stopAllGateways());

const tempDb = () => `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-start-')), 'gateway.db')}`;
const demoKey = (output: string) => /sk-gw-[A-Za-z0-9_-]{20,}/.exec(output)?.[0];

async function waitForKey(gateway: { output(): string }) {
  for (let i = 0; i < 100 && !demoKey(gateway.output()); i++) await new Promise((r) => setTimeout(r, 50));
  return demoKey(gateway.output());
}

describe('first start', () => {
  it('prints a demo key once; the README curl for /v1/balance works with it', async () => {
    const DATABASE_URL = tempDb();
    const first = await startGateway({ DATABASE_URL, GATEWAY_DEMO: '', NODE_ENV: '' });
    const key = await waitForKey(first);
    expect(key).toBeDefined();
    expect(first.output()).toContain(`curl -s ${first.url}/v1/balance -H "Authorization: Bearer ${key}"`);
    const res = await request(`${first.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } });
    expect(await res.body.json()).toMatchObject({ success: true, unlimited_quota: true });
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = await startGateway({ DATABASE_URL, GATEWAY_DEMO: '', NODE_ENV: '' });
    await new Promise((r) => setTimeout(r, 300));
    expect(demoKey(second.output())).toBeUndefined();
  }, 120_000);

  it('makes no demo account in production', async () => {
    const gateway = await startGateway({ DATABASE_URL: tempDb(), GATEWAY_DEMO: '', NODE_ENV: 'production' });
    await new Promise((r) => setTimeout(r, 300));
    expect(demoKey(gateway.output())).toBeUndefined();
  }, 90_000);

  it.each([
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['BILLING_UNIT', 'eur'],
    ['REDIS_URL', 'http://x'],
    ['RATE_LIMIT_RPM', '0'],
  ])('an invalid %s stops the start with a message naming it', async (name, value) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, DATABASE_URL: tempDb(), [name]: value },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(output).toContain(name);
  }, 90_000);

  it('SIGTERM stops accepting and exits 0', async () => {
    const port = await freePort();
    const gateway = await startGateway({ DATABASE_URL: tempDb(), PORT: String(port) });
    expect(await gateway.stop('SIGTERM')).toBe(0);
    await expect(request(`${gateway.url}/healthz`)).rejects.toThrow();
  }, 90_000);

  it('SIGTERM with a request in flight: the request completes with 200, then the process exits 0', async () => {
    const gateway = await startGateway({ DATABASE_URL: tempDb(), GATEWAY_DEMO: '', NODE_ENV: '' });
    const key = await waitForKey(gateway);
    // A text call the simulator holds for a second: still running when the signal arrives.
    const inFlight = request(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key!, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi [sim:delay=1]' }] }),
    });
    await new Promise((r) => setTimeout(r, 300));
    const exitCode = gateway.stop('SIGTERM');
    const res = await inFlight;
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ type: 'message', role: 'assistant' });
    expect(await exitCode).toBe(0);
  }, 90_000);
});

describe('CLUSTER', () => {
  it('CLUSTER=2 serves from two processes on one port and stops on SIGTERM', async () => {
    const gateway = await startGateway({ DATABASE_URL: tempDb(), CLUSTER: '2' });
    const prefixes = new Set<string>();
    // The second process may still be starting when the first answers: keep asking for a while.
    const deadline = Date.now() + 30_000;
    while (prefixes.size < 2 && Date.now() < deadline) {
      // A new connection each time, so the primary hands it to either process.
      const res = await request(`${gateway.url}/healthz`, { headers: { connection: 'close' } });
      await res.body.dump();
      prefixes.add(String(res.headers['x-request-id']).split('-')[0]!);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(prefixes.size).toBe(2);
    expect(await gateway.stop('SIGTERM')).toBe(0);
  }, 120_000);
});
