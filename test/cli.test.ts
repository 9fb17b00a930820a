import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, freshDatabase, type TestApp, type TestDatabase } from './harness.ts';
import { ROOT } from './helpers/gateway-process.ts';

// `node bin/gateway.js ...` (what `npx gateway` runs) against a database of its own: every command
// prints one JSON document on stdout; a bad command exits 1 with a JSON error on stderr.

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database?.drop();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function gateway(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/gateway.js', ...args],
      { cwd: ROOT, env: { ...process.env, ...database.env, LOG_LEVEL: 'silent' }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs a command that must succeed and returns its stdout parsed as JSON. */
async function ok(...args: string[]): Promise<any> {
  const result = await gateway(...args);
  expect(result.code, `gateway ${args.join(' ')} failed:\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout);
}

/** Runs a command that must fail: exit 1, nothing on stdout, `{error: {...}}` as JSON on stderr. */
async function fails(...args: string[]): Promise<{ code: number; type: string; message: string }> {
  const result = await gateway(...args);
  expect(result.code, `gateway ${args.join(' ')}`).toBe(1);
  expect(result.stdout).toBe('');
  let parsed: any;
  expect(() => (parsed = JSON.parse(result.stderr)), `stderr is not JSON:\n${result.stderr}`).not.toThrow();
  expect(parsed).toEqual({ error: { code: expect.any(Number), type: expect.any(String), message: expect.any(String) } });
  return parsed.error;
}

const USER = {
  id: expect.stringMatching(/^usr_/),
  name: expect.any(String),
  status: 'active',
  balance: expect.any(Number),
  balance_credits: expect.any(Number),
  used: expect.any(Number),
  used_credits: expect.any(Number),
  created_at: expect.any(Number),
};
const KEY = {
  id: expect.stringMatching(/^key_/),
  user_id: expect.stringMatching(/^usr_/),
  name: expect.any(String),
  prefix: expect.stringMatching(/^sk-gw-/),
  status: 'active',
  unlimited: expect.any(Boolean),
  quota_used: expect.any(Number),
  created_at: expect.any(Number),
};

describe(`gateway CLI prints JSON [${backendName}]`, () => {
  it('migrate, users, keys and the ledger audit, in the order an operator uses them', async () => {
    const migrated = await ok('migrate');
    expect(migrated).toEqual({ applied: expect.any(Array) });
    expect(migrated.applied.length).toBeGreaterThan(0);
    expect(await ok('migrate')).toEqual({ applied: [] });

    const user = await ok('users', 'create', '--name', 'x', '--balance', '2');
    expect(user).toEqual({ ...USER, name: 'x', balance: 2, balance_credits: 2000, used: 0, used_credits: 0 });

    const list = await ok('users', 'list');
    expect(Array.isArray(list)).toBe(true);
    expect(list).toContainEqual(user);
    for (const entry of list) expect(entry).toEqual(USER);

    const toppedUp = await ok('users', 'topup', user.id, '--amount', '1');
    expect(toppedUp).toEqual({ ...user, balance: 3, balance_credits: 3000 });

    const key = await ok('keys', 'create', '--user', user.id, '--quota', '1');
    expect(key).toEqual({ ...KEY, user_id: user.id, unlimited: false, quota: 1, quota_used: 0, rate_limit_rpm: null, key: expect.stringMatching(/^sk-gw-/) });
    expect(key.key.startsWith(key.prefix)).toBe(true);

    const keys = await ok('keys', 'list', '--user', user.id);
    expect(keys).toHaveLength(1);
    const { key: secret, ...shown } = key;
    expect(keys[0]).toEqual(shown);
    expect(JSON.stringify(keys)).not.toContain(secret);

    // The printed secret is a working key: an app on the same database accepts it.
    const app: TestApp = await createTestApp({}, database);
    try {
      const res = await app.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer ${secret}` } });
      expect(res.json()).toMatchObject({ success: true, remain_balance: 1, unlimited_quota: false });

      expect(await ok('keys', 'delete', key.id)).toEqual({ id: key.id, deleted: true });
      expect(await ok('keys', 'list', '--user', user.id)).toEqual([]);
      const row = await app.ctx.db.selectFrom('api_keys').select('status').where('id', '=', key.id).executeTakeFirst();
      expect(row?.status).toBe('deleted');
    } finally {
      await app.close();
    }

    expect(await ok('ledger', 'audit')).toEqual({ balanced: true, mismatches: [] });
  }, 60_000);

  it('a bad command exits 1 with a JSON error', async () => {
    const [unknown, missingUser, noSuchUser, notANumber] = await Promise.all([
      fails('users', 'explode'),
      fails('keys', 'create', '--unlimited'),
      fails('users', 'topup', 'usr_nope', '--amount', '1'),
      fails('users', 'create', '--name', 'y', '--balance', 'lots'),
    ]);
    expect(unknown).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringContaining('users explode') });
    expect(missingUser).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringContaining('--user') });
    expect(noSuchUser).toMatchObject({ code: 404, type: 'not_found_error' });
    expect(notANumber).toMatchObject({ code: 400, message: expect.stringContaining('--balance') });
  }, 30_000);

  it('an unknown option exits 1 with a JSON error, not a stack trace', async () => {
    const error = await fails('users', 'list', '--bogus');
    expect(error).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringContaining('--bogus') });
  }, 30_000);
});
