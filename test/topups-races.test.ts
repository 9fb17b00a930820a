import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';

// Stripe events about one top-up that meet inside the gateway: each is handled in steps (reads,
// then conditional writes), and another event's commit can land between two of them. A hook in the
// top-ups repo lets a test commit the other event at exactly that point.

type Hook = () => Promise<void>;
const hooks = vi.hoisted(() => ({ beforeGetTopup: undefined as Hook | undefined }));
vi.mock('../src/modules/topups/topups.repo.ts', async (importOriginal) => {
  const repo = await importOriginal<typeof import('../src/modules/topups/topups.repo.ts')>();
  return {
    ...repo,
    getTopup: async (...args: Parameters<typeof repo.getTopup>) => {
      const hook = hooks.beforeGetTopup;
      hooks.beforeGetTopup = undefined;
      if (hook) await hook();
      return repo.getTopup(...args);
    },
  };
});

const PASSWORD = 'correct horse battery staple';
const USD = 1_000_000;

let stripe: FakeStripe;
let t: TestApp;
let base: string;
beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await createTestApp({ ...stripe.env, WORKERS: '0', TEXT_FLOAT_CALLS: '0', CONSOLE_SIGNIN_RPM: '1000' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

async function holder() {
  const account = await seedAccount(t.ctx, 0);
  const email = `${account.user.id.toLowerCase()}@example.com`;
  const put = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(put.statusCode, put.body).toBe(200);
  const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
  expect(session.statusCode, session.body).toBe(200);
  return { userId: account.user.id, headers: { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token } };
}

async function startTopup(headers: Record<string, string>, amount: number) {
  const res = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers, payload: { amount } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { id: string; checkout_url: string };
  return { id: body.id, sessionId: body.checkout_url.split('/').pop()! };
}

const deliver = (event: object) => stripe.deliver(`${base}/webhooks/stripe`, event);
const balanceOf = async (userId: string) => Number((await getUser(t.ctx.db, userId))!.balance);
const rows = (topupId: string) => t.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', topupId).orderBy('id').execute();

describe(`top-up events that meet [${backendName}]`, () => {
  it('a refund whose top-up is credited while the refund is being looked at is taken back, not acknowledged and lost', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h.headers, 20);
    const paid = stripe.pay(sessionId);
    const refund = stripe.refund(sessionId, 2000);
    // The refund finds no paid top-up for its payment; before it looks at the top-up its charge
    // names, the completion is delivered and commits.
    hooks.beforeGetTopup = async () => {
      const completed = await deliver(paid);
      expect(completed.status, completed.body).toBe(200);
    };
    const answer = await deliver(refund);
    expect(hooks.beforeGetTopup).toBeUndefined();
    if (answer.status === 503) {
      // Refused for now is as good: Stripe delivers it again, and that delivery takes it back.
      const again = await deliver(refund);
      expect(again.status, again.body).toBe(200);
    } else {
      expect(answer.status, answer.body).toBe(200);
    }
    expect(await balanceOf(h.userId)).toBe(0);
    expect(await rows(id)).toEqual([
      { kind: 'topup', balance_delta: 20 * USD },
      { kind: 'reversal', balance_delta: -20 * USD },
    ]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });
});
