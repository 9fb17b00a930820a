import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { backendName, usingPostgres } from './harness.ts';
import { freePort } from './support/gateway-process.ts';

// A store that cannot be used at start: one line on stderr that names the variable and where it
// points, exit 1, no stack and no raw error object.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', GATEWAY_DEMO: '0', DATABASE_URL: '', REDIS_URL: '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

function expectOneCleanLine(stderr: string, ...mentions: string[]) {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  for (const text of mentions) expect(lines[0]).toContain(text);
  expect(stderr).not.toMatch(/^\s+at /m);
}

const serve = ['--import', 'tsx', 'src/main.ts'];
const cli = (...args: string[]) => ['bin/gateway.js', ...args];

describe(`start-up errors [${backendName}]`, () => {
  it('a closed REDIS_URL port: the variable and the address, at once', async () => {
    const port = await freePort();
    const dir = `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-startup-')), 'gateway.db')}`;
    for (const args of [serve, cli('users', 'list')]) {
      const { code, stderr, ms } = await run(args, { DATABASE_URL: dir, REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(code).toBe(1);
      expectOneCleanLine(stderr, 'REDIS_URL', `127.0.0.1:${port}`);
      expect(ms).toBeLessThan(15_000);
    }
  }, 60_000);

  it('a SQLite file that cannot be made: DATABASE_URL and the path', async () => {
    for (const args of [serve, cli('users', 'list'), cli('migrate')]) {
      const { code, stderr } = await run(args, { DATABASE_URL: 'sqlite:/etc/hostname/gateway.db' });
      expect(code).toBe(1);
      expectOneCleanLine(stderr, 'DATABASE_URL', '/etc/hostname/gateway.db');
    }
  }, 60_000);

  it('a bad TRUST_PROXY or WEBHOOK_TIMEOUT, HOST, a PORT in use or a FILES_DIR that cannot be made: one line naming the variable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-startup-'));
    const database = `sqlite:${path.join(dir, 'gateway.db')}`;
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as net.AddressInfo).port);
    const cases: [Record<string, string>, string[]][] = [
      [{ TRUST_PROXY: 'true' }, ['TRUST_PROXY', '"true"']],
      [{ TRUST_PROXY: '127.0.0.1, 10.0.0.0/99' }, ['TRUST_PROXY', '10.0.0.0/99']],
      [{ HOST: 'nohost.invalid' }, ['HOST', 'nohost.invalid']],
      [{ PORT: port }, ['PORT', `127.0.0.1:${port}`, 'in use']],
      [{ FILES_DIR: '/etc/hostname/files' }, ['FILES_DIR', '/etc/hostname/files']],
      [{ WEBHOOK_TIMEOUT: '0' }, ['WEBHOOK_TIMEOUT', '"0"']],
      [{ WEBHOOK_TIMEOUT: '10,20' }, ['WEBHOOK_TIMEOUT', '"10,20"']],
    ];
    try {
      for (const [env, mentions] of cases) {
        const { code, stderr } = await run(serve, { DATABASE_URL: database, ...env });
        expect(code, JSON.stringify(env)).toBe(1);
        expectOneCleanLine(stderr, ...mentions);
      }
    } finally {
      busy.close();
    }
  }, 90_000);

  it.runIf(usingPostgres)('a Postgres database that does not exist: DATABASE_URL and the address, from serve and the CLI', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = '/gw_no_such_database';
    url.search = '';
    for (const args of [serve, cli('users', 'list'), cli('migrate'), cli('worker')]) {
      const { code, stderr } = await run(args, { DATABASE_URL: url.toString() });
      expect(code, args.join(' ')).toBe(1);
      expectOneCleanLine(stderr, 'DATABASE_URL', `${url.hostname}:${url.port || 5432}/gw_no_such_database`, 'does not exist');
    }
  }, 60_000);
});
