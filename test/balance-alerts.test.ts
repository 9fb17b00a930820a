import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

// Low-balance alerts (issue 25): one signed balance.low event per crossing below alert_below, sent
// through the callbacks' durable delivery. Receivers are on 127.0.0.1, so the private-address
// widening is on in `t`; `strict` keeps the rules and resolves names through a test resolver.

const CHECK_MS = 50;
const WEBHOOKS = { WEBHOOK_ALLOWED_PORTS: '*', WEBHOOK_RETRY_DELAYS: '0.3,0.6,0.9', WEBHOOK_TIMEOUT: '0.5', BALANCE_ALERT_CHECK_MS: String(CHECK_MS), SIMULATOR_LATENCY_MS: '20' };
let t: TestApp;
let strict: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({ ...WEBHOOKS, WEBHOOK_ALLOW_PRIVATE: 'true' }, undefined, { workers: true });
  strict = await createTestApp(WEBHOOKS, undefined, { workers: true });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await t.close();
  await strict.close();
});

async function receiver(respond?: Receiver['respond']) {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, CHECK_MS * 10));

/** Spends one image (imggen-2-official at 1k: $0.011) and waits until the task has ended. */
async function spendOnce(app: TestApp, auth: Record<string, string>) {
  const res = await app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 'a cat' } });
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().data[0].task_id;
  await waitUntil('the task to end', async () => ['completed', 'failed'].includes((await app.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data.status));
}

const remain = async (app: TestApp, auth: Record<string, string>) => (await app.app.inject({ method: 'GET', url: '/v1/user/balance', headers: auth })).json().remain_balance as number;
const setAlert = (app: TestApp, userId: string, payload: object) => app.app.inject({ method: 'PATCH', url: `/admin/users/${userId}`, headers: adminHeaders, payload });
const attemptsOf = (app: TestApp, userId: string) =>
  app.ctx.db.selectFrom('webhook_attempts').innerJoin('balance_alerts', 'balance_alerts.id', 'webhook_attempts.task_id').select(['webhook_attempts.outcome', 'webhook_attempts.status_code', 'webhook_attempts.error']).where('balance_alerts.user_id', '=', userId).orderBy('webhook_attempts.id').execute();

describe(`low-balance alerts [${backendName}]`, () => {
  it('one signed balance.low per crossing: none while still below, one again after a top-up and a new crossing', async () => {
    const r = await receiver();
    const account = await seedAccount(t.ctx, 1);
    const set = await setAlert(t, account.user.id, { alert_below: 1, alert_url: `${r.url}/alerts` });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ alert_below: 1, alert_url: `${r.url}/alerts` });
    await settle();
    expect(r.received).toHaveLength(0); // 1 is not below 1

    await spendOnce(t, account.auth);
    await waitUntil('the alert', () => r.received.length === 1);
    const balance = await remain(t, account.auth);
    expect(balance).toBeLessThan(1);
    const secret = (await t.app.inject({ method: 'GET', url: `/admin/users/${account.user.id}/webhook-secret`, headers: adminHeaders })).json().secret;
    const first = r.received[0]!;
    expect(first.path).toBe('/alerts');
    const event = new Webhook(secret).verify(first.body, first.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'balance.low', data: { user_id: account.user.id, balance, alert_below: 1 } });

    await spendOnce(t, account.auth);
    await settle();
    expect(r.received).toHaveLength(1); // still below: nothing more

    const cost = 1 - balance;
    const top = await t.app.inject({ method: 'POST', url: `/admin/users/${account.user.id}/topup`, headers: adminHeaders, payload: { amount: Number((1 - (await remain(t, account.auth)) + cost / 2).toFixed(6)) } });
    expect(top.statusCode).toBe(200);
    expect(await remain(t, account.auth)).toBeGreaterThanOrEqual(1);
    await settle();
    expect(r.received).toHaveLength(1); // lifted: re-armed, nothing sent
    await spendOnce(t, account.auth);
    await waitUntil('the second alert', () => r.received.length === 2);
    expect(r.received[1]!.headers['webhook-id']).not.toBe(first.headers['webhook-id']);
    expect(new Webhook(secret).verify(r.received[1]!.body, r.received[1]!.headers as Record<string, string>)).toMatchObject({ type: 'balance.low' });
    await settle();
    expect(r.received).toHaveLength(2);
  });

  it('a 5xx is retried with the same message id, then nothing more', async () => {
    const r = await receiver((_, index) => (index === 0 ? 503 : 200));
    const account = await seedAccount(t.ctx, 0.5);
    expect((await setAlert(t, account.user.id, { alert_below: 1, alert_url: r.url })).statusCode).toBe(200);
    await waitUntil('the retried alert', () => r.received.length === 2);
    expect(r.received[1]!.headers['webhook-id']).toBe(r.received[0]!.headers['webhook-id']);
    await waitUntil('both attempts recorded', async () => (await attemptsOf(t, account.user.id)).length === 2);
    expect((await attemptsOf(t, account.user.id)).map((a) => [a.outcome, a.status_code])).toEqual([['retry', 503], ['delivered', 200]]);
    await settle();
    expect(r.received).toHaveLength(2);
  });

  it('alert_url: a private address is refused when set, and one that resolves to a private address later is dropped', async () => {
    const account = await seedAccount(strict.ctx, 0.5);
    const literal = await setAlert(strict, account.user.id, { alert_below: 1, alert_url: 'http://127.0.0.1/alerts' });
    expect(literal.statusCode).toBe(400);
    expect(literal.json().error.message).toContain('alert_url');
    let address = '93.184.216.34';
    strict.ctx.resolve = async (host) => (host === 'alerts.example.net' ? [address] : []);
    // Accepted while it resolves to a public address (no threshold yet, so nothing is sent there);
    // by the time the alert goes, the name points inside.
    const accepted = await setAlert(strict, account.user.id, { alert_url: 'http://alerts.example.net/hook' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    address = '127.0.0.1';
    expect((await setAlert(strict, account.user.id, { alert_below: 1 })).statusCode).toBe(200);
    await waitUntil('the refused attempt', async () => (await attemptsOf(strict, account.user.id)).length === 1);
    await settle();
    const attempts = await attemptsOf(strict, account.user.id);
    expect(attempts).toEqual([{ outcome: 'refused', status_code: null, error: expect.stringContaining('127.0.0.1') }]);
  });
});
