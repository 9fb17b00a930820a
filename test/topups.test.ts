import { sql } from 'kysely';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { debit } from '../src/modules/billing/ledger.ts';
import { MAX_BALANCE_UNITS } from '../src/lib/money.ts';
import { loadConfig } from '../src/config.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';

// Top-ups paid with Stripe Checkout, against a strict local Stripe that the official SDK drives.
// Events are signed by the SDK's own test-header helper and delivered over a real port: the
// signature covers the raw bytes. After every step the balance, the ledger audit and both
// histories are checked exactly.

const PASSWORD = 'correct horse battery staple';
const USD = 1_000_000;

let stripe: FakeStripe;
let t: TestApp;
let base: string;
beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await createTestApp({ ...stripe.env, WORKERS: '0', TEXT_FLOAT_CALLS: '0', CONSOLE_SIGNIN_RPM: '1000', PUBLIC_BASE_URL: 'https://gateway.example' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

type Holder = { userId: string; key: string; headers: Record<string, string> };

async function holder(balance = 0): Promise<Holder> {
  const account = await seedAccount(t.ctx, balance);
  const email = `${account.user.id.toLowerCase()}@example.com`;
  const put = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(put.statusCode, put.body).toBe(200);
  const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
  expect(session.statusCode, session.body).toBe(200);
  return { userId: account.user.id, key: account.key, headers: { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token } };
}

async function startTopup(h: Holder, amount: number) {
  const res = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: h.headers, payload: { amount } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { id: string; checkout_url: string };
  const sessionId = body.checkout_url.split('/').pop()!;
  expect(stripe.sessions.get(sessionId)?.metadata).toEqual({ topup_id: body.id, user_id: h.userId });
  return { ...body, sessionId };
}

const deliver = (event: object, secret?: string) => stripe.deliver(`${base}/webhooks/stripe`, event, secret);
async function delivered(event: object) {
  const res = await deliver(event);
  expect(res.status, res.body).toBe(200);
  expect(JSON.parse(res.body)).toEqual({ received: true });
}

const balanceOf = async (userId: string) => Number((await getUser(t.ctx.db, userId))!.balance);

/** The holder's and the operator's view of one top-up: the same row. */
async function histories(h: Holder) {
  const own = await t.app.inject({ method: 'GET', url: '/console/api/topups', headers: h.headers });
  expect(own.statusCode, own.body).toBe(200);
  const all = await t.app.inject({ method: 'GET', url: `/admin/topups?user_id=${h.userId}`, headers: adminHeaders });
  expect(all.statusCode, all.body).toBe(200);
  expect(all.json().data).toEqual(own.json().data);
  return own.json().data as any[];
}

/** Balance, the books, and the one top-up's row as both histories show it. */
async function expectState(h: Holder, balanceUsd: number, row: Record<string, unknown>) {
  expect(await balanceOf(h.userId)).toBe(Math.round(balanceUsd * USD));
  expect(await auditLedger(t.ctx.db)).toEqual([]);
  const rows = await histories(h);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject(row);
}

const reversals = (topupId: string) => t.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', topupId).orderBy('id').execute();

describe(`the fake Stripe, driven by the official SDK [${backendName}]`, () => {
  it('creates and retrieves a Checkout Session as the SDK sends and parses it, and refuses what Stripe refuses', async () => {
    const sdk = new Stripe(stripe.secretKey, { protocol: 'http', host: '127.0.0.1', port: Number(new URL(stripe.url).port), maxNetworkRetries: 0 });
    const created = await sdk.checkout.sessions.create({
      mode: 'payment',
      line_items: [{ quantity: 2, price_data: { currency: 'usd', unit_amount: 1250, product_data: { name: 'Credits' } } }],
      success_url: 'https://example.com/ok?s={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://example.com/cancel',
      client_reference_id: 'usr_1',
      metadata: { topup_id: 'topup_1', note: 'a & b = [c]' },
    });
    expect(created).toMatchObject({ object: 'checkout.session', mode: 'payment', amount_total: 2500, currency: 'usd', payment_status: 'unpaid', status: 'open', client_reference_id: 'usr_1', payment_intent: null, metadata: { topup_id: 'topup_1', note: 'a & b = [c]' }, success_url: 'https://example.com/ok?s={CHECKOUT_SESSION_ID}' });
    expect(created.id).toMatch(/^cs_test_/);
    expect(created.url).toBe(`${stripe.url}/c/pay/${created.id}`);
    expect(created.lastResponse.statusCode).toBe(200);
    const sent = stripe.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/checkout/sessions', status: 200 });
    expect(sent.stripeVersion).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(sent.idempotencyKey).toMatch(/^stripe-node-retry-/);
    expect(sent.form).toMatchObject({ line_items: [{ quantity: '2', price_data: { currency: 'usd', unit_amount: '1250', product_data: { name: 'Credits' } } }] });

    const read = await sdk.checkout.sessions.retrieve(created.id);
    expect(read.id).toBe(created.id);
    expect(read.amount_total).toBe(2500);
    await expect(sdk.checkout.sessions.retrieve('cs_test_nothing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404, code: 'resource_missing' });

    // Once paid, the session's PaymentIntent reads back with the metadata it was made with.
    const withIntent = await sdk.checkout.sessions.create({ mode: 'payment', line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 700, product_data: { name: 'x' } } }], success_url: 'https://example.com', payment_intent_data: { metadata: { topup_id: 'topup_2' } } });
    const paidWith = stripe.pay(withIntent.id) as { data: { object: { payment_intent: string } } };
    const intent = await sdk.paymentIntents.retrieve(paidWith.data.object.payment_intent);
    expect(intent).toMatchObject({ object: 'payment_intent', amount: 700, currency: 'usd', status: 'succeeded', metadata: { topup_id: 'topup_2' } });
    expect(intent.id).toMatch(/^pi_/);
    await expect(sdk.paymentIntents.retrieve('pi_nothing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404, code: 'resource_missing' });

    const wrongKey = new Stripe('sk_test_wrong_key_000000', { protocol: 'http', host: '127.0.0.1', port: Number(new URL(stripe.url).port), maxNetworkRetries: 0 });
    await expect(wrongKey.checkout.sessions.retrieve(created.id)).rejects.toMatchObject({ type: 'StripeAuthenticationError', statusCode: 401, rawType: 'invalid_request_error' });
    const noSuccess = { mode: 'payment', line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 100, product_data: { name: 'x' } } }] } as Stripe.Checkout.SessionCreateParams;
    await expect(sdk.checkout.sessions.create(noSuccess)).rejects.toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'success_url' });
    const noCurrency = { ...noSuccess, success_url: 'https://example.com', line_items: [{ quantity: 1, price_data: { unit_amount: 100, product_data: { name: 'x' } } }] } as Stripe.Checkout.SessionCreateParams;
    await expect(sdk.checkout.sessions.create(noCurrency)).rejects.toMatchObject({ code: 'parameter_missing', param: 'line_items[0][price_data][currency]' });
    await expect(sdk.checkout.sessions.create({ ...noSuccess, success_url: 'https://example.com', colour: 'red' } as Stripe.Checkout.SessionCreateParams)).rejects.toMatchObject({ code: 'parameter_unknown', param: 'colour' });
    const params = { ...noSuccess, success_url: 'https://example.com' };
    const tooMuch = { ...params, line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 100_000_000, product_data: { name: 'x' } } }] };
    await expect(sdk.checkout.sessions.create(tooMuch)).rejects.toMatchObject({ statusCode: 400, param: 'line_items[0][price_data][unit_amount]' });
    await sdk.checkout.sessions.create(params, { idempotencyKey: 'same-key' });
    await expect(sdk.checkout.sessions.create({ ...params, client_reference_id: 'other' }, { idempotencyKey: 'same-key' })).rejects.toMatchObject({ type: 'StripeIdempotencyError', statusCode: 400 });
  });

  it('signs an event that the SDK verifies, and refuses one signed with another secret', () => {
    const event = stripe.expire([...stripe.sessions.keys()][0]!);
    const payload = JSON.stringify(event);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripe.webhookSecret });
    expect(Stripe.webhooks.constructEvent(payload, header, stripe.webhookSecret)).toMatchObject({ id: event.id, type: 'checkout.session.expired' });
    expect(() => Stripe.webhooks.constructEvent(payload, header, 'whsec_other')).toThrow(/signature/i);
  });
});

describe(`top-ups with Stripe Checkout [${backendName}]`, () => {
  it('starts a checkout for an amount inside TOPUP_MIN..TOPUP_MAX, with the account and top-up on the session', async () => {
    const h = await holder();
    const session = await t.app.inject({ method: 'GET', url: '/console/api/session', headers: h.headers });
    expect(session.json().topups).toEqual({ min: 5, max: 1000, currency: 'usd' });
    for (const amount of [4.99, 1000.01]) {
      const res = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: h.headers, payload: { amount } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain('from 5 to 1000');
    }
    expect((await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: h.headers, payload: { amount: 10.001 } })).statusCode).toBe(400);
    // Below a ledger unit an amount is rounded: the checkout names what is charged and credited.
    const rounded = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: (await holder()).headers, payload: { amount: 7.0000000001 } });
    expect(rounded.statusCode, rounded.body).toBe(200);
    expect(stripe.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!.form).toMatchObject({ line_items: [{ price_data: { unit_amount: '700', product_data: { name: 'Balance top-up: 7 USD' } } }] });
    await delivered(stripe.expire(rounded.json().checkout_url.split('/').pop()));
    const extra = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: h.headers, payload: { amount: 10, currency: 'eur' } });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error.message).toContain('currency');
    const noCsrf = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: { cookie: h.headers.cookie! }, payload: { amount: 10 } });
    expect(noCsrf.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: '/console/api/topups', payload: { amount: 10 } })).statusCode).toBe(401);

    const started = await startTopup(h, 12.5);
    const sent = stripe.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!.form!;
    expect(sent).toEqual({
      mode: 'payment',
      line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '1250', product_data: { name: 'Balance top-up: 12.5 USD' } } }],
      client_reference_id: h.userId,
      metadata: { topup_id: started.id, user_id: h.userId },
      payment_intent_data: { metadata: { topup_id: started.id, user_id: h.userId } },
      success_url: `https://gateway.example/console/?topup=${started.id}&checkout={CHECKOUT_SESSION_ID}#/topups`,
      cancel_url: `https://gateway.example/console/?topup=${started.id}&cancelled=1#/topups`,
    });
    expect(started.checkout_url).toBe(`${stripe.url}/c/pay/${started.sessionId}`);
    await expectState(h, 0, { id: started.id, user_id: h.userId, amount: 12.5, price: { amount: 12.5, currency: 'usd' }, status: 'pending', refunded: 0, disputed: 0, paid_at: null });
    await delivered(stripe.expire(started.sessionId));
    await expectState(h, 0, { status: 'expired' });
  });

  it('credits a paid session once however often its completion arrives', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 25);
    const completed = stripe.pay(sessionId);
    for (let i = 0; i < 3; i++) await delivered(completed);
    await expectState(h, 25, { id, status: 'paid', amount: 25 });
    expect((await histories(h))[0].paid_at).toBeGreaterThan(0);
    expect(await reversals(id)).toEqual([{ kind: 'topup', balance_delta: 25 * USD }]);
  });

  it('20 concurrent deliveries of one paid completion credit exactly once', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 40);
    const completed = stripe.pay(sessionId);
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(completed)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await expectState(h, 40, { id, status: 'paid' });
    expect(await reversals(id)).toEqual([{ kind: 'topup', balance_delta: 40 * USD }]);
  });

  it('a failure of ours answers 5xx, so Stripe delivers again, and the next delivery credits', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 30);
    const completed = stripe.pay(sessionId);
    await sql`alter table topups rename to topups_away`.execute(t.ctx.db);
    try {
      const failed = await deliver(completed);
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.body).error.message).not.toContain('topups');
    } finally {
      await sql`alter table topups_away rename to topups`.execute(t.ctx.db);
    }
    expect(await balanceOf(h.userId)).toBe(0);
    await delivered(completed);
    await expectState(h, 30, { id, status: 'paid' });
  });

  it('a top-up past the balance maximum is refused at checkout; one paid meanwhile waits (503) until the account has spent', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 50);
    const near = await t.app.inject({ method: 'POST', url: `/admin/users/${h.userId}/topup`, headers: adminHeaders, payload: { amount: 999_999_990 } });
    expect(near.statusCode, near.body).toBe(200);
    const refused = await t.app.inject({ method: 'POST', url: '/console/api/topups', headers: h.headers, payload: { amount: 20 } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toBe('amount: the balance would go above its maximum of 1000000000');
    const completed = stripe.pay(sessionId);
    expect((await deliver(completed)).status).toBe(503);
    expect(await balanceOf(h.userId)).toBe(MAX_BALANCE_UNITS - 10 * USD);
    await t.ctx.db.transaction().execute((trx) => debit(trx, 'charge', { userId: h.userId, amount: 100 * USD, note: 'spent' }));
    await delivered(completed);
    await expectState(h, 999_999_940, { id, status: 'paid' });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('a bad signature is a 400 and changes nothing', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 10);
    const completed = stripe.pay(sessionId);
    expect((await deliver(completed, 'whsec_not_the_secret')).status).toBe(400);
    const payload = JSON.stringify(completed);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripe.webhookSecret });
    const post = (body: string, headers: Record<string, string>) => fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    // The same event with one byte changed, and an event with no signature at all.
    expect((await post(payload.replace('"paid"', '"paid" '), { 'stripe-signature': signature })).status).toBe(400);
    expect((await post(payload, {})).status).toBe(400);
    // Parsed and written again, the JSON is other bytes: refused, which is why the body is kept raw.
    expect((await post(JSON.stringify(JSON.parse(payload), null, 1), { 'stripe-signature': signature })).status).toBe(400);
    // Signed, but not the shape of an event: a 400 in the envelope, not a 500 Stripe would retry.
    for (const odd of [{ id: 'evt_odd', type: 'checkout.session.completed' }, { id: 'evt_odd', type: 'charge.refunded', data: null }, { id: 'evt_odd', data: { object: {} } }]) {
      const body = JSON.stringify(odd);
      const res = await post(body, { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: stripe.webhookSecret }) });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe(400);
    }
    await expectState(h, 0, { id, status: 'pending' });
    expect((await post(payload, { 'stripe-signature': signature })).status).toBe(200);
    await expectState(h, 10, { id, status: 'paid' });
  });

  it("the API document lists the webhook's own answers: 503 (credit it later) and 413 (over its limit)", async () => {
    const doc = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(doc.statusCode).toBe(200);
    expect(Object.keys(doc.json().paths['/webhooks/stripe'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '413', '500', '503']));
  });

  it("a body over the endpoint's own 1 MB limit is a 413 that names that limit", async () => {
    const res = await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=0' }, body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: { code: 413, type: 'request_too_large', message: 'Request body is larger than the limit of 1048576 bytes' } });
  });

  it('an unpaid completion credits nothing; the delayed payment succeeding credits it, failing marks it failed', async () => {
    const h = await holder();
    const first = await startTopup(h, 15);
    await delivered(stripe.pay(first.sessionId, { delayed: true }));
    await expectState(h, 0, { id: first.id, status: 'pending' });
    const succeeded = stripe.settleDelayed(first.sessionId, true);
    await delivered(succeeded);
    await delivered(succeeded);
    await expectState(h, 15, { id: first.id, status: 'paid' });

    const other = await holder();
    const second = await startTopup(other, 15);
    await delivered(stripe.pay(second.sessionId, { delayed: true }));
    await delivered(stripe.settleDelayed(second.sessionId, false));
    await expectState(other, 0, { id: second.id, status: 'failed' });
  });

  it('a partial refund takes back its part once, then the rest, whatever the order the events arrive in', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 50);
    await delivered(stripe.pay(sessionId));
    const partial = stripe.refund(sessionId, 1500);
    await delivered(partial);
    await delivered(partial);
    await expectState(h, 35, { id, status: 'partially_refunded', refunded: 15 });
    const rest = stripe.refund(sessionId, 3500);
    await Promise.all([deliver(rest), deliver(rest), deliver(partial)]);
    await delivered(partial);
    await expectState(h, 0, { id, status: 'refunded', refunded: 50 });
    expect(await reversals(id)).toEqual([
      { kind: 'topup', balance_delta: 50 * USD },
      { kind: 'reversal', balance_delta: -15 * USD },
      { kind: 'reversal', balance_delta: -35 * USD },
    ]);
  });

  it('a refund that arrives before the payment is credited is refused until then, and taken back once after', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 20);
    const paid = stripe.pay(sessionId);
    const refund = stripe.refund(sessionId, 2000);
    const early = await deliver(refund);
    expect(early.status).toBe(503);
    expect(JSON.parse(early.body)).toMatchObject({ error: { code: 503, message: expect.stringContaining('deliver it again later') } });
    await expectState(h, 0, { id, status: 'pending', refunded: 0 });
    await delivered(paid);
    await expectState(h, 20, { id, status: 'paid' });
    await Promise.all([delivered(refund), delivered(refund)]);
    await expectState(h, 0, { id, status: 'refunded', refunded: 20 });
    expect(await reversals(id)).toEqual([
      { kind: 'topup', balance_delta: 20 * USD },
      { kind: 'reversal', balance_delta: -20 * USD },
    ]);
  });

  it('a lost dispute that arrives before the payment is credited is refused until then, and taken back once after', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 25);
    const paid = stripe.pay(sessionId);
    const lost = stripe.closeDispute(sessionId, 'lost');
    // A dispute carries no top-up of its own: the gateway asks Stripe for its PaymentIntent, which names it.
    const early = await deliver(lost);
    expect(early.status, early.body).toBe(503);
    expect(JSON.parse(early.body)).toMatchObject({ error: { code: 503, message: expect.stringContaining('deliver it again later') } });
    await expectState(h, 0, { id, status: 'pending', disputed: 0 });
    await delivered(paid);
    await expectState(h, 25, { id, status: 'paid' });
    await Promise.all([delivered(lost), delivered(lost)]);
    await expectState(h, 0, { id, status: 'disputed', disputed: 25 });
    expect(await reversals(id)).toEqual([
      { kind: 'topup', balance_delta: 25 * USD },
      { kind: 'reversal', balance_delta: -25 * USD },
    ]);
  });

  it('a lost dispute takes back the money once, below zero when it was spent, and the next paid call is a 402', async () => {
    const h = await holder();
    const { id, sessionId } = await startTopup(h, 5);
    await delivered(stripe.pay(sessionId));
    const call = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': h.key, 'content-type': 'application/json' }, payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
    expect(call.statusCode, call.body).toBe(200);
    await t.ctx.textMoney.flush();
    const left = await balanceOf(h.userId);
    expect(left).toBeLessThan(5 * USD);
    await delivered(stripe.closeDispute(sessionId, 'won'));
    await expectState(h, left / USD, { id, status: 'paid', disputed: 0 });
    const lost = stripe.closeDispute(sessionId, 'lost');
    await Promise.all([deliver(lost), deliver(lost), deliver(lost)]);
    await expectState(h, left / USD - 5, { id, status: 'disputed', disputed: 5 });
    expect(await balanceOf(h.userId)).toBeLessThan(0);
    // A refund after the loss has nothing left to take.
    await delivered(stripe.refund(sessionId, 500));
    await expectState(h, left / USD - 5, { id, status: 'disputed', refunded: 0, disputed: 5 });
    const refused = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': h.key, 'content-type': 'application/json' }, payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
    expect(refused.statusCode).toBe(402);
  });

  it('acknowledges events it has no use for, and sessions that are not its own', async () => {
    const h = await holder();
    await delivered({ id: 'evt_1', object: 'event', type: 'customer.created', api_version: '2025-09-30.clover', created: 1, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object: { id: 'cus_1', object: 'customer' } } });
    const sdk = new Stripe(stripe.secretKey, { protocol: 'http', host: '127.0.0.1', port: Number(new URL(stripe.url).port) });
    const foreign = await sdk.checkout.sessions.create({ mode: 'payment', success_url: 'https://example.com', line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 999, product_data: { name: 'x' } } }], metadata: { topup_id: 'topup_not_ours' } });
    await delivered(stripe.pay(foreign.id));
    await delivered(stripe.refund(foreign.id, 999));
    // A dispute names no top-up: its PaymentIntent (asked of Stripe) names none of ours either.
    await delivered(stripe.closeDispute(foreign.id, 'lost'));
    expect(await auditLedger(t.ctx.db)).toEqual([]);
    expect(await histories(h)).toEqual([]);
  });

  it("the operator lists every account's top-ups newest first, a page at a time", async () => {
    const h = await holder();
    const made = [];
    for (const amount of [5, 6, 7]) made.push((await startTopup(h, amount)).id);
    const first = await t.app.inject({ method: 'GET', url: `/admin/topups?user_id=${h.userId}&limit=2`, headers: adminHeaders });
    expect(first.json().data.map((r: { id: string }) => r.id)).toEqual([made[2], made[1]]);
    const second = await t.app.inject({ method: 'GET', url: `/admin/topups?user_id=${h.userId}&limit=2&after=${first.json().next}`, headers: adminHeaders });
    expect(second.json()).toMatchObject({ data: [{ id: made[0] }], next: null });
    const everyone = await t.app.inject({ method: 'GET', url: '/admin/topups?limit=500', headers: adminHeaders });
    expect(new Set(everyone.json().data.map((r: { user_id: string }) => r.user_id)).size).toBeGreaterThan(3);
    expect((await t.app.inject({ method: 'GET', url: '/admin/topups' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/console/api/topups', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode).toBe(401);
  });
});

describe(`top-ups in a currency Stripe counts in thousandths or whole units [${backendName}]`, () => {
  it('TOPUP_CURRENCY=kwd asks Stripe for thousandths (ending in 0) and credits what was paid; isk for whole krona sent with two decimals', async () => {
    for (const [currency, amount, unitAmount, refused] of [['kwd', 12.5, '12500', 12.505], ['isk', 12, '1200', 12.5]] as const) {
      const other = await createTestApp({ ...stripe.env, TOPUP_CURRENCY: currency, WORKERS: '0', TEXT_FLOAT_CALLS: '0', CONSOLE_SIGNIN_RPM: '1000' });
      try {
        await other.app.listen({ port: 0, host: '127.0.0.1' });
        const account = await seedAccount(other.ctx, 0);
        const email = `${account.user.id.toLowerCase()}@example.com`;
        await other.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
        const session = await other.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
        const headers = { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token };
        const odd = await other.app.inject({ method: 'POST', url: '/console/api/topups', headers, payload: { amount: refused } });
        expect(odd.statusCode, `${currency} ${refused}`).toBe(400);
        const res = await other.app.inject({ method: 'POST', url: '/console/api/topups', headers, payload: { amount } });
        expect(res.statusCode, res.body).toBe(200);
        const sent = stripe.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!.form! as { line_items: { price_data: { unit_amount: string; currency: string } }[] };
        expect(sent.line_items[0]!.price_data).toMatchObject({ currency, unit_amount: unitAmount });
        const { id, checkout_url } = res.json() as { id: string; checkout_url: string };
        const port = (other.app.server.address() as { port: number }).port;
        const paid = await stripe.deliver(`http://127.0.0.1:${port}/webhooks/stripe`, stripe.pay(checkout_url.split('/').pop()!));
        expect(paid.status, paid.body).toBe(200);
        expect(Number((await getUser(other.ctx.db, account.user.id))!.balance)).toBe(Math.round(amount * USD));
        const listed = await other.app.inject({ method: 'GET', url: '/console/api/topups', headers });
        expect(listed.json().data[0]).toMatchObject({ id, amount, price: { amount, currency }, status: 'paid' });
        expect(await auditLedger(other.ctx.db)).toEqual([]);
      } finally {
        await other.close();
      }
    }
  });
});

describe('TOPUP_MAX and what Stripe charges at most', () => {
  it('a TOPUP_MAX past eight digits of the currency\'s smallest unit is refused at start, naming it', () => {
    const env = { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' };
    expect(loadConfig({ ...env, TOPUP_MAX: '999999.99' }).topups!.max).toBe(999999.99);
    expect(() => loadConfig({ ...env, TOPUP_MAX: '1000000' })).toThrow(/TOPUP_MAX must be at most 999999.99 with TOPUP_CURRENCY=usd/);
    // Whole yen: 99,999,999 of them; thousandths of a dinar: 99,999.999.
    expect(loadConfig({ ...env, TOPUP_CURRENCY: 'jpy', TOPUP_MAX: '99999999' }).topups!.max).toBe(99999999);
    expect(() => loadConfig({ ...env, TOPUP_CURRENCY: 'kwd', TOPUP_MAX: '100000' })).toThrow(/TOPUP_MAX must be at most 99999.999/);
    // Credits: the same dollars, counted in credits.
    expect(() => loadConfig({ ...env, BILLING_UNIT: 'credits', CREDITS_PER_USD: '1000', TOPUP_MAX: '1000000000' })).toThrow(/TOPUP_MAX must be at most 999999990/);
  });
});

describe(`top-ups off [${backendName}]`, () => {
  it('without STRIPE_SECRET_KEY every top-up route answers a 404 that says so, and the console is told', async () => {
    const off = await createTestApp({ WORKERS: '0' });
    try {
      const account = await seedAccount(off.ctx, 0);
      const email = `${account.user.id.toLowerCase()}@example.com`;
      await off.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
      const session = await off.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
      expect(session.json().topups).toBeNull();
      const headers = { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token };
      for (const [method, url, payload] of [['POST', '/console/api/topups', { amount: 10 }], ['GET', '/console/api/topups'], ['POST', '/webhooks/stripe', {}]] as const) {
        const res = await off.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
        expect(res.statusCode, url).toBe(404);
        expect(res.json().error.message).toContain('STRIPE_SECRET_KEY');
      }
      const admin = await off.app.inject({ method: 'GET', url: '/admin/topups', headers: adminHeaders });
      expect(admin.statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe(`Stripe refusing the checkout [${backendName}]`, () => {
  it('a Checkout Session Stripe will not make is a 502 in the envelope, documented, and the top-up is listed as failed', async () => {
    // A secret key Stripe does not know: every call is refused (401), as with a revoked key.
    const refused = await createTestApp({ ...stripe.env, STRIPE_SECRET_KEY: 'sk_test_revoked_000000000000', WORKERS: '0', CONSOLE_SIGNIN_RPM: '1000' });
    try {
      const account = await seedAccount(refused.ctx, 0);
      const email = `${account.user.id.toLowerCase()}@example.com`;
      await refused.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
      const session = await refused.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
      const headers = { cookie: String(session.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': session.json().csrf_token };
      const res = await refused.app.inject({ method: 'POST', url: '/console/api/topups', headers, payload: { amount: 10 } });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json().error).toMatchObject({ code: 502, message: expect.stringContaining('Stripe could not start the checkout') });
      const listed = await refused.app.inject({ method: 'GET', url: '/console/api/topups', headers });
      expect(listed.json().data).toEqual([expect.objectContaining({ amount: 10, status: 'failed' })]);
      const doc = await refused.app.inject({ method: 'GET', url: '/openapi.json' });
      expect(Object.keys(doc.json().paths['/console/api/topups'].post.responses)).toContain('502');
    } finally {
      await refused.close();
    }
  });
});
