import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAddress } from '../src/lib/net/address-rules.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

// The callback address rules with the widening OFF. A real receiver listens on 127.0.0.1 and counts connections:
// every refused address must leave it at zero. Ports are opened (`*`) only where a test needs the
// receiver's port to prove the address rule itself refuses.

let strict: TestApp;
let anyPort: TestApp;
let r: Receiver;
const resolved = new Map<string, string[]>();

beforeAll(async () => {
  r = await startReceiver();
  strict = await createTestApp({ SIMULATOR_LATENCY_MS: '20', PUBLIC_BASE_URL: 'https://gateway.example.com', WEBHOOK_BLOCKED_HOSTS: 'api.gateway.example.com' }, undefined, { workers: true });
  anyPort = await createTestApp({ SIMULATOR_LATENCY_MS: '20', WEBHOOK_ALLOWED_PORTS: '*' }, undefined, { workers: true });
  // An injected resolver: names resolve to whatever the test says, like a hostile DNS server.
  for (const app of [strict, anyPort]) app.ctx.resolve = async (host) => resolved.get(host) ?? ['93.184.216.34'];
});
afterAll(async () => {
  await r.close();
  await strict.close();
  await anyPort.close();
});

async function submitAndSettle(app: TestApp, webhook: string) {
  const account = await seedAccount(app.ctx, 5);
  const res = await app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { prompt: 'x', webhook } });
  expect(res.statusCode).toBe(200); // a bad address never fails the submit
  const taskId = res.json().data[0].task_id;
  await waitUntil('the task to end', async () => {
    const data = (await app.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: account.auth })).json().data;
    return data.status === 'completed';
  });
  await new Promise((resolve) => setTimeout(resolve, 150));
  return taskId as string;
}

describe(`SSRF: refused callback addresses make no connection [${backendName}]`, () => {
  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}`],
    ['[::1]', (p: number) => `http://[::1]:${p}`],
    ['localhost', (p: number) => `http://localhost:${p}`],
    ['0.0.0.0', (p: number) => `http://0.0.0.0:${p}`],
    ['[::ffff:127.0.0.1]', (p: number) => `http://[::ffff:127.0.0.1]:${p}`],
    ['[64:ff9b::7f00:1]', (p: number) => `http://[64:ff9b::7f00:1]:${p}`],
    ['a name whose lookup returns a private address', (p: number) => `http://evil.example.net:${p}`],
  ])('%s', async (_name, url) => {
    resolved.set('evil.example.net', ['127.0.0.1']);
    resolved.set('localhost', ['127.0.0.1', '::1']);
    const before = r.connections;
    const taskId = await submitAndSettle(anyPort, url(r.port));
    expect(r.connections).toBe(before);
    const task = await anyPort.ctx.db.selectFrom('tasks').select('webhook').where('id', '=', taskId).executeTakeFirstOrThrow();
    expect(task.webhook).toBeNull();
  });

  it.each(['http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data', 'http://100.64.0.1/', 'http://8.8.8.8:8080/', 'ftp://8.8.8.8/', 'https://gateway.example.com/hook', 'https://api.gateway.example.com/', 'http://user:pw@8.8.8.8/'])(
    '%s is dropped at submit: no delivery job, no request, one refused record with the reason',
    async (url) => {
      const taskId = await submitAndSettle(strict, url);
      const task = await strict.ctx.db.selectFrom('tasks').select('webhook').where('id', '=', taskId).executeTakeFirstOrThrow();
      expect(task.webhook).toBeNull();
      expect(await strict.ctx.db.selectFrom('jobs').select('id').where('task_id', '=', taskId).where('kind', '=', 'deliver').execute()).toEqual([]);
      const deliveries = await strict.app.inject({ method: 'GET', url: `/admin/tasks/${taskId}/deliveries`, headers: adminHeaders });
      expect(deliveries.json().data).toEqual([expect.objectContaining({ outcome: 'refused', status_code: null, error: expect.any(String) })]);
    },
  );

  it('DNS rebinding: a name that was public at submit and private at delivery gets no connection', async () => {
    resolved.set('rebind.example.net', ['93.184.216.34']);
    const account = await seedAccount(anyPort.ctx, 5);
    const before = r.connections;
    // Public for the submit-time check and the delivery-time check; private by the time the
    // connection itself looks the name up. The checking lookup of the dispatcher must refuse.
    const original = anyPort.ctx.resolve;
    let calls = 0;
    anyPort.ctx.resolve = async (host) => (host === 'rebind.example.net' && ++calls > 2 ? ['127.0.0.1'] : original(host));
    try {
      const res = await anyPort.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { prompt: 'x', webhook: `http://rebind.example.net:${r.port}` } });
      const taskId = res.json().data[0].task_id;
      let list: any[] = [];
      await waitUntil('the first attempt', async () => {
        list = (await anyPort.app.inject({ method: 'GET', url: `/admin/tasks/${taskId}/deliveries`, headers: adminHeaders })).json().data;
        return list.length === 1;
      });
      expect(list[0].error).toMatch(/refused/);
      expect(list[0].status_code).toBeNull();
      expect(r.connections).toBe(before);
    } finally {
      anyPort.ctx.resolve = original;
    }
  });

  it('address rules cover private, link-local, CGNAT, multicast, reserved, documentation and mapped forms', () => {
    for (const bad of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '240.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.1', '203.0.113.1', '::1', '::', 'fe80::1', 'fc00::1', 'ff02::1', '2001:db8::1', '::ffff:10.0.0.1', '64:ff9b::a00:1']) {
      expect(checkAddress(bad).ok, bad).toBe(false);
    }
    for (const good of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(checkAddress(good).ok, good).toBe(true);
  });
});
