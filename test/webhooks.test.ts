import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callbackUrl } from '../src/lib/net/target.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

// Callbacks with real local receivers. The private-address widening is on here (the receivers are on
// 127.0.0.1), delays are shrunk: retries after 0.3, 0.6 and 0.9 s, attempt timeout 0.5 s.

const DELAYS = [300, 600, 900];
let t: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp(
    { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', WEBHOOK_RETRY_DELAYS: '0.3,0.6,0.9', WEBHOOK_TIMEOUT: '0.5', SIMULATOR_LATENCY_MS: '30' },
    undefined,
    { workers: true },
  );
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => t.close());

async function receiver(respond?: Receiver['respond']) {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

async function submit(auth: Record<string, string>, webhook: string, prompt = 'a cat') {
  const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt, webhook } });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id as string;
}

const listAttempts = (taskId: string) => t.app.inject({ method: 'GET', url: `/admin/tasks/${taskId}/deliveries`, headers: adminHeaders }).then((r) => r.json().data as any[]);

/** The recorded attempts, once there are as many as the receiver saw (a row is written after the answer). */
async function attempts(taskId: string, atLeast = 1) {
  let list: any[] = [];
  await waitUntil(`${atLeast} recorded attempts`, async () => (list = await listAttempts(taskId)).length >= atLeast);
  return list;
}

describe('the callback address', () => {
  it.each([
    ['https://cb.example.com', 'https://cb.example.com/callback'],
    ['https://cb.example.com/', 'https://cb.example.com/callback'],
    ['https://cb.example.com/api', 'https://cb.example.com/api/callback'],
    ['https://cb.example.com/api/', 'https://cb.example.com/api/callback'],
  ])('%s -> %s', (base, target) => expect(callbackUrl(base)).toBe(target));
});

describe(`callbacks to real receivers [${backendName}]`, () => {
  it('a 2xx receiver gets exactly one POST at <base>/callback whose body is the task query data', async () => {
    const r = await receiver();
    const account = await seedAccount(t.ctx, 5);
    const taskId = await submit(account.auth, `${r.url}/hooks/`);
    await waitUntil('the callback', () => r.received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.path).toBe('/hooks/callback');
    expect(r.received[0]!.headers['content-type']).toBe('application/json');
    const poll = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: account.auth });
    expect(poll.body).toBe(`{"code":200,"data":${r.received[0]!.body}}`);
    expect(JSON.parse(r.received[0]!.body)).toMatchObject({ id: taskId, status: 'completed', progress: 100 });
    expect(await attempts(taskId)).toMatchObject([{ attempt: 1, status_code: 200, outcome: 'delivered' }]);
  });

  it('a failed task pushes too, with its error', async () => {
    const r = await receiver();
    const account = await seedAccount(t.ctx, 5);
    const taskId = await submit(account.auth, r.url, 'x [sim:fail=content_policy_violation]');
    await waitUntil('the callback', () => r.received.length === 1);
    expect(JSON.parse(r.received[0]!.body)).toMatchObject({ id: taskId, status: 'failed', error: { code: 'content_policy_violation' } });
  });

  it('video submits take a webhook too; the callback carries result.videos', async () => {
    const r = await receiver();
    const account = await seedAccount(t.ctx, 5);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/videos/generations',
      headers: account.auth,
      payload: { model: 'vidgen-2.0', prompt: 'waves', duration: 4, resolution: '480p', webhook: r.url },
    });
    expect(res.statusCode).toBe(200);
    await waitUntil('the callback', () => r.received.length === 1);
    const record = JSON.parse(r.received[0]!.body);
    expect(record).toMatchObject({ id: res.json().data[0].task_id, status: 'completed' });
    expect(record.result.videos[0]).toMatchObject({ duration: 4, resolution: '480p' });
  });

  it('500, 500, 200 gives three attempts spaced by the schedule', async () => {
    const r = await receiver((_req, i) => (i < 2 ? 500 : 200));
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('three attempts', () => r.received.length === 3);
    const [a, b, c] = r.received.map((x) => x.at);
    expect(b! - a!).toBeGreaterThanOrEqual(DELAYS[0]! - 20);
    expect(c! - b!).toBeGreaterThanOrEqual(DELAYS[1]! - 20);
    expect((await attempts(taskId, 3)).map((x) => x.outcome)).toEqual(['retry', 'retry', 'delivered']);
  });

  it('always 503 gives four attempts, then stops', async () => {
    const r = await receiver(() => 503);
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('four attempts', () => r.received.length === 4);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(r.received).toHaveLength(4);
    expect((await attempts(taskId, 4)).map((x) => x.outcome)).toEqual(['retry', 'retry', 'retry', 'dropped']);
  });

  it('a 4xx gives one attempt', async () => {
    const r = await receiver(() => 400);
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('one attempt', () => r.received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(r.received).toHaveLength(1);
    expect(await attempts(taskId)).toMatchObject([{ status_code: 400, outcome: 'failed' }]);
  });

  it('a receiver that never answers is retried after the timeout', async () => {
    const r = await receiver((_req, i) => (i === 0 ? 'hang' : 200));
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('the retry', () => r.received.length === 2);
    expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(500 + DELAYS[0]! - 50);
    const list = await attempts(taskId, 2);
    expect(list[0]).toMatchObject({ status_code: null, outcome: 'retry' });
    expect(list[0].error).toMatch(/timeout|abort/i);
    expect(list[1]).toMatchObject({ status_code: 200, outcome: 'delivered' });
  });

  it('a redirect is not followed and counts as a failure', async () => {
    const r = await receiver((req) => (req.path === '/callback' ? { redirect: '/elsewhere' } : 200));
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('the retry', () => r.received.length >= 2);
    expect(r.received.every((x) => x.path === '/callback')).toBe(true);
    expect((await attempts(taskId))[0]).toMatchObject({ status_code: 302, outcome: 'retry' });
  });

  it('requests are signed (Standard Webhooks), verified with the standardwebhooks package', async () => {
    const r = await receiver();
    const account = await seedAccount(t.ctx, 5);
    const taskId = await submit(account.auth, r.url);
    await waitUntil('the callback', () => r.received.length === 1);
    const secret = (await t.app.inject({ method: 'GET', url: `/admin/users/${account.user.id}/webhook-secret`, headers: adminHeaders })).json().secret;
    expect(secret).toMatch(/^whsec_/);
    const { headers, body } = r.received[0]!;
    expect(headers['webhook-id']).toBe(`msg_${taskId}`);
    const verified = new Webhook(secret).verify(body, headers as Record<string, string>);
    expect(verified).toMatchObject({ id: taskId });
    const rotated = (await t.app.inject({ method: 'POST', url: `/admin/users/${account.user.id}/webhook-secret/rotate`, headers: adminHeaders })).json().secret;
    expect(rotated).not.toBe(secret);
    expect(() => new Webhook(rotated).verify(body, headers as Record<string, string>)).toThrow();
  });

  it('operators list attempts and push again', async () => {
    const r = await receiver();
    const taskId = await submit((await seedAccount(t.ctx, 5)).auth, r.url);
    await waitUntil('the callback', () => r.received.length === 1);
    const again = await t.app.inject({ method: 'POST', url: `/admin/tasks/${taskId}/redeliver`, headers: adminHeaders });
    expect(again.statusCode).toBe(202);
    await waitUntil('the second push', () => r.received.length === 2);
    expect(r.received[1]!.headers['webhook-id']).toBe(r.received[0]!.headers['webhook-id']);
    expect((await attempts(taskId, 2)).map((a) => a.round)).toEqual([0, 1]);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/gateway_webhook_deliveries_total\{outcome="delivered"\} \d+/);
  });
});
