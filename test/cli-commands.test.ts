import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, freshDatabase, seedAccount, type TestDatabase } from './harness.ts';
import { bundledCli, removeBundledCli, runCli } from './support/cli.ts';
import { startReceiver, waitUntil } from './support/receiver.ts';

let database: TestDatabase;
let cli: string;
beforeAll(async () => {
  database = await freshDatabase();
  cli = await bundledCli();
});
afterAll(async () => {
  await database.drop();
  await removeBundledCli();
});

/** A command through the bundle; `npx gateway`'s own entry (bin/gateway.js, the sources through tsx) runs the first. */
async function gateway(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args[0] === 'migrate' ? 'bin/gateway.js' : cli, args, database.env);
  const text = stdout.trim() || stderr.trim();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { code, json, stderr };
}

describe(`the gateway command prints JSON [${backendName}]`, () => {
  it('users, keys, channels and the ledger audit', async () => {
    expect((await gateway('migrate')).json).toHaveProperty('applied');
    const user = await gateway('users', 'create', '--name', 'cli-user', '--balance', '2');
    expect(user.json).toMatchObject({ name: 'cli-user', balance: 2 });
    const id = user.json.id;
    expect((await gateway('users', 'list')).json.map((u: any) => u.id)).toContain(id);
    expect((await gateway('users', 'topup', id, '--amount', '1')).json.balance).toBe(3);
    const login = await gateway('users', 'console-login', id, '--email', 'CLI@example.com');
    expect(login.json).toEqual({ user_id: id, email: 'cli@example.com', password: expect.stringMatching(/^[\w-]{16}$/) });
    const key = await gateway('keys', 'create', '--user', id, '--quota', '1', '--rpm', '30');
    expect(key.json).toMatchObject({ user_id: id, quota: 1, rate_limit_rpm: 30, unlimited: false });
    expect(key.json.key).toMatch(/^sk-gw-/);
    expect((await gateway('keys', 'list', '--user', id)).json).toHaveLength(1);
    expect((await gateway('keys', 'update', key.json.id, '--status', 'disabled')).json.status).toBe('disabled');
    expect((await gateway('keys', 'delete', key.json.id)).json).toEqual({ id: key.json.id, deleted: true });
    const channel = await gateway('channels', 'create', '--name', 'b', '--type', 'relay', '--base-url', 'http://127.0.0.1:9', '--models', 'imggen-2,imgpro-3-preview', '--mapping', 'imggen-2=imggen-2-ext');
    expect(channel.json).toMatchObject({ type: 'relay', models: ['imggen-2', 'imgpro-3-preview'], model_mapping: { 'imggen-2': 'imggen-2-ext' } });
    expect((await gateway('ledger', 'audit')).json).toEqual({ balanced: true, mismatches: [] });
    // Thirteen process starts: generous, as a loaded CI machine makes each one slow.
  }, 180_000);

  it('keys update and channels update take only what their HTTP routes take', async () => {
    await gateway('migrate');
    const user = (await gateway('users', 'create', '--name', 'cli-checks', '--balance', '1')).json;
    const key = (await gateway('keys', 'create', '--user', user.id, '--quota', '1')).json;
    const deleted = await gateway('keys', 'update', key.id, '--status', 'deleted');
    expect(deleted.code).toBe(1);
    expect(deleted.json.error).toMatchObject({ code: 400, message: '--status must be one of active, disabled' });
    const channel = (await gateway('channels', 'create', '--name', 'c', '--type', 'simulator', '--models', 'imggen-2')).json;
    const weight = await gateway('channels', 'update', channel.id, '--weight', '1.5');
    expect(weight.json.error).toMatchObject({ code: 400, message: '--weight must be integer' });
    expect((await gateway('keys', 'list', '--user', user.id)).json).toMatchObject([{ id: key.id, status: 'active' }]);
    expect((await gateway('channels', 'list')).json.find((c: any) => c.id === channel.id)).toMatchObject({ weight: 1 });
  }, 120_000);

  it('negative numbers, the signing secret, a task\'s deliveries and a redelivery', async () => {
    await gateway('migrate');
    const low = await gateway('channels', 'create', '--name', 'fallback', '--type', 'simulator', '--models', 'imggen-2', '--priority', '-5');
    expect(low.json).toMatchObject({ name: 'fallback', priority: -5 });
    expect((await gateway('channels', 'update', low.json.id, '--priority=-7')).json).toMatchObject({ priority: -7 });

    const receiver = await startReceiver();
    const app = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', PUBLIC_BASE_URL: 'http://gateway.test' }, database, { workers: true });
    try {
      const account = await seedAccount(app.ctx, 5);
      const secret = await gateway('users', 'webhook-secret', account.user.id);
      expect(secret.json).toEqual({ user_id: account.user.id, secret: expect.stringMatching(/^whsec_/) });
      const rotated = await gateway('users', 'webhook-secret', account.user.id, '--rotate');
      expect(rotated.json.secret).not.toBe(secret.json.secret);
      const submit = await app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...account.auth, 'content-type': 'application/json' }, payload: { model: 'imggen-2', prompt: 'cli', webhook: receiver.url } });
      const taskId = submit.json().data[0].task_id;
      await waitUntil('the callback', () => receiver.received.length === 1);
      await waitUntil('its record', async () => (await gateway('tasks', 'deliveries', taskId)).json?.length === 1);
      expect((await gateway('tasks', 'redeliver', taskId)).json).toEqual({ id: taskId, round: 1 });
      await waitUntil('the second push', () => receiver.received.length === 2);
      expect((await gateway('tasks', 'deliveries', 'task_nope')).json.error).toMatchObject({ code: 404 });
      expect((await gateway('users', 'webhook-secret', 'usr_nope')).json.error).toMatchObject({ code: 404 });
    } finally {
      await app.close();
      await receiver.close();
    }
  }, 120_000);

  it('a bad command exits 1 with a JSON error', async () => {
    const bad = await gateway('users', 'explode');
    expect(bad.code).toBe(1);
    expect(bad.json.error).toMatchObject({ code: 400, type: 'invalid_request_error' });
    const missing = await gateway('keys', 'create', '--unlimited');
    expect(missing.code).toBe(1);
    expect(missing.json.error.message).toContain('--user');
  }, 90_000);
});
