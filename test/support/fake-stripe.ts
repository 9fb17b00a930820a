import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { request } from 'undici';
import { FormError, parseForm, type FormObject, type FormValue } from './fake-stripe-form.ts';
import * as O from './fake-stripe-objects.ts';

// A strict local Stripe API, for what a Checkout top-up uses: POST /v1/checkout/sessions,
// GET /v1/checkout/sessions/:id and GET /v1/payment_intents/:id (of a session paid here, with the
// payment_intent_data metadata it was made with), as a real HTTP server the official SDK talks to.
// - Auth: `Authorization: Bearer <secret key>`; otherwise 401 with Stripe's error object
//   {error: {type: 'invalid_request_error', message}} (what the SDK turns into StripeAuthenticationError).
// - Bodies: application/x-www-form-urlencoded in Stripe's bracket encoding (fake-stripe-form.ts).
// - Stripe-Version: any dated version is accepted (YYYY-MM-DD with an optional .name); a malformed one is a 400.
// - Idempotency-Key: a repeated key with the same body answers the first answer again; with another body, 400 idempotency_error.
// - Checkout Sessions: mode, line_items (each quantity >= 1 and price_data with currency,
//   unit_amount and product_data[name]) and success_url are required; an unknown parameter is a 400
//   parameter_unknown, a missing one parameter_missing, naming the param as Stripe does.
// What the customer does at Stripe (pay, a delayed method's outcome, refunds, disputes) is done by
// the test through this object, which answers the event Stripe would send; `deliver` signs it with
// the SDK's own generateTestHeaderString and POSTs it as Stripe does.

const SESSION_PARAMS = new Set(['mode', 'line_items', 'success_url', 'cancel_url', 'client_reference_id', 'metadata', 'payment_intent_data', 'customer_email', 'expand', 'currency', 'payment_method_types', 'locale', 'expires_at']);

class StripeFailure extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown>) {
    super(String(body.message));
  }
}
const invalid = (message: string, extra: Record<string, unknown> = {}) => new StripeFailure(400, { type: 'invalid_request_error', message, ...extra });
const missing = (param: string) => invalid(`Missing required param: ${param}.`, { code: 'parameter_missing', param, doc_url: 'https://stripe.com/docs/error-codes/parameter-missing' });
const unknown = (param: string) => invalid(`Received unknown parameter: ${param}`, { code: 'parameter_unknown', param, doc_url: 'https://stripe.com/docs/error-codes/parameter-unknown' });

function text(form: FormObject, key: string, param = key): string {
  const value = form[key];
  if (value === undefined || value === '') throw missing(param);
  if (typeof value !== 'string') throw invalid(`Invalid string: ${param}`, { param });
  return value;
}
function integer(form: FormObject, key: string, param: string, min: number): number {
  const raw = text(form, key, param);
  if (!/^-?\d+$/.test(raw) || Number(raw) < min) throw invalid(`Invalid integer: ${raw}`, { code: 'parameter_invalid_integer', param });
  return Number(raw);
}
function object(value: FormValue | undefined, param: string): FormObject {
  if (value === undefined) throw missing(param);
  if (typeof value === 'string' || Array.isArray(value)) throw invalid(`Invalid object: ${param}`, { param });
  return value;
}
function metadata(value: FormValue | undefined, param: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(object(value, param))) {
    if (typeof v !== 'string' || k.length > 40 || v.length > 500) throw invalid(`Invalid metadata: ${param}[${k}]`, { param: `${param}[${k}]` });
    out[k] = v;
  }
  return out;
}

function sessionInput(form: FormObject): O.CheckoutSessionInput {
  for (const key of Object.keys(form)) if (!SESSION_PARAMS.has(key)) throw unknown(key);
  const mode = text(form, 'mode');
  if (!['payment', 'setup', 'subscription'].includes(mode)) throw invalid(`Invalid mode: must be one of payment, setup, or subscription`, { param: 'mode' });
  const items = form.line_items;
  if (items === undefined) throw missing('line_items');
  if (!Array.isArray(items) || items.length === 0) throw invalid('Invalid array', { param: 'line_items' });
  const line_items = items.map((raw, i) => {
    const at = `line_items[${i}]`;
    const item = object(raw, at);
    for (const key of Object.keys(item)) if (!['quantity', 'price_data'].includes(key)) throw unknown(`${at}[${key}]`);
    const priceData = object(item.price_data, `${at}[price_data]`);
    for (const key of Object.keys(priceData)) if (!['currency', 'unit_amount', 'product_data'].includes(key)) throw unknown(`${at}[price_data][${key}]`);
    const product = object(priceData.product_data, `${at}[price_data][product_data]`);
    return {
      quantity: integer(item, 'quantity', `${at}[quantity]`, 1),
      price_data: {
        currency: text(priceData, 'currency', `${at}[price_data][currency]`).toLowerCase(),
        unit_amount: integer(priceData, 'unit_amount', `${at}[price_data][unit_amount]`, 0),
        product_data: { name: text(product, 'name', `${at}[price_data][product_data][name]`) },
      },
    };
  });
  for (const [i, item] of line_items.entries()) {
    // Stripe takes at most eight digits of the smallest unit in an amount.
    if (item.price_data.unit_amount > 99_999_999) throw invalid('This value must be less than or equal to 99999999.', { param: `line_items[${i}][price_data][unit_amount]` });
    // Stripe's three-decimal currencies: amounts in thousandths, whose last digit must be 0.
    if (['bhd', 'jod', 'kwd', 'omr', 'tnd'].includes(item.price_data.currency) && item.price_data.unit_amount % 10 !== 0) {
      throw invalid('Amounts in three-decimal currencies must end in 0', { param: `line_items[${i}][price_data][unit_amount]` });
    }
  }
  const paymentIntentData = form.payment_intent_data === undefined ? undefined : object(form.payment_intent_data, 'payment_intent_data');
  return {
    mode,
    line_items,
    success_url: text(form, 'success_url'),
    ...(form.cancel_url !== undefined ? { cancel_url: text(form, 'cancel_url') } : {}),
    ...(form.client_reference_id !== undefined ? { client_reference_id: text(form, 'client_reference_id') } : {}),
    ...(form.metadata !== undefined ? { metadata: metadata(form.metadata, 'metadata') } : {}),
    ...(paymentIntentData ? { payment_intent_data: { metadata: metadata(paymentIntentData.metadata, 'payment_intent_data[metadata]') } } : {}),
  };
}

export interface FakeStripe {
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** STRIPE_* variables that point a gateway here. */
  env: Record<string, string>;
  sessions: Map<string, O.FakeCheckoutSession>;
  /** Every API request: method, path, the headers that matter, and the parsed form. */
  requests: { method: string; path: string; status: number; stripeVersion?: string; idempotencyKey?: string; form?: FormObject }[];
  /** The customer pays at Stripe: `delayed` leaves the payment pending (a bank debit), as checkout.session.completed with payment_status unpaid. */
  pay(sessionId: string, options?: { delayed?: boolean }): O.FakeEvent;
  /** A delayed payment's outcome. */
  settleDelayed(sessionId: string, succeeded: boolean): O.FakeEvent;
  expire(sessionId: string): O.FakeEvent;
  /** A refund of `amount` (smallest unit) of the session's charge: charge.refunded with the cumulative amount_refunded. */
  refund(sessionId: string, amount: number): O.FakeEvent;
  /** A dispute of the session's charge closed: charge.dispute.closed. */
  closeDispute(sessionId: string, status: 'lost' | 'won', amount?: number): O.FakeEvent;
  /** POSTs the event to `url` signed as Stripe signs it; `secret` overrides the signing secret. */
  deliver(url: string, event: object, secret?: string): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

export async function startFakeStripe(options: { secretKey?: string; webhookSecret?: string } = {}): Promise<FakeStripe> {
  const secretKey = options.secretKey ?? `sk_test_${O.stripeId('key').slice(4)}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${O.stripeId('s').slice(2)}`;
  const sessions = new Map<string, O.FakeCheckoutSession>();
  const charges = new Map<string, O.FakeCharge>();
  /** payment_intent_data[metadata] per session: Stripe copies a PaymentIntent's metadata onto the charge it makes. */
  const intentMetadata = new Map<string, Record<string, string>>();
  const idempotent = new Map<string, { digest: string; status: number; body: unknown }>();
  const requests: FakeStripe['requests'] = [];
  let base = '';

  function answer(method: string, path: string, headers: http.IncomingHttpHeaders, body: string): { status: number; body: unknown } {
    const auth = headers.authorization;
    if (!auth) throw new StripeFailure(401, { type: 'invalid_request_error', message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')." });
    const key = /^Bearer (\S+)$/.exec(auth)?.[1];
    if (key !== secretKey) throw new StripeFailure(401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${(key ?? '').slice(0, 8)}${'*'.repeat(Math.max(0, (key ?? '').length - 12))}${(key ?? '').slice(-4)}` });
    const version = headers['stripe-version'];
    if (version !== undefined && !/^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$/.test(String(version))) throw invalid(`Invalid Stripe API version: ${version}`);
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (!String(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) throw invalid('Invalid request: the body must be application/x-www-form-urlencoded');
      const input = sessionInput(parseForm(body));
      const id = `cs_test_${O.stripeId('x').slice(2)}${O.stripeId('x').slice(2)}`;
      const session = O.checkoutSession(id, input, `${base}/c/pay/${id}`);
      sessions.set(id, session);
      intentMetadata.set(id, input.payment_intent_data?.metadata ?? {});
      return { status: 200, body: session };
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && retrieve) {
      const session = sessions.get(decodeURIComponent(retrieve[1]!));
      if (!session) throw new StripeFailure(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'session', message: `No such checkout.session: '${retrieve[1]}'` });
      return { status: 200, body: session };
    }
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && intent) {
      const paid = charges.get(decodeURIComponent(intent[1]!));
      if (!paid) throw new StripeFailure(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'intent', message: `No such payment_intent: '${intent[1]}'` });
      return { status: 200, body: O.paymentIntent(paid) };
    }
    throw new StripeFailure(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.` });
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      // The hosted checkout page the browser is sent to: a page of its own, nothing to pay with.
      if (req.method === 'GET' && path.startsWith('/c/pay/')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><title>Stripe Checkout (fake)</title><main><h1>Pay with Stripe (fake)</h1></main></html>');
        return;
      }
      const key = req.headers['idempotency-key'] as string | undefined;
      const digest = createHash('sha256').update(`${req.method} ${path} ${body}`).digest('hex');
      let out: { status: number; body: unknown };
      const earlier = key ? idempotent.get(key) : undefined;
      try {
        if (earlier && earlier.digest !== digest) throw new StripeFailure(400, { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.` });
        out = earlier ?? answer(req.method ?? 'GET', path, req.headers, body);
      } catch (err) {
        if (!(err instanceof StripeFailure || err instanceof FormError)) throw err;
        out = err instanceof StripeFailure ? { status: err.status, body: { error: err.body } } : { status: 400, body: { error: { type: 'invalid_request_error', message: err.message } } };
      }
      if (key && req.method === 'POST' && !earlier && out.status < 500) idempotent.set(key, { digest, ...out });
      requests.push({ method: req.method ?? '', path, status: out.status, stripeVersion: req.headers['stripe-version'] as string | undefined, idempotencyKey: key, ...(body && req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? { form: safeForm(body) } : {}) });
      res.writeHead(out.status, { 'content-type': 'application/json', 'request-id': O.stripeId('req'), 'stripe-version': O.API_VERSION, ...(key ? { 'idempotency-key': key } : {}) }).end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const sessionOf = (id: string) => {
    const session = sessions.get(id);
    if (!session) throw new Error(`fake Stripe: no session ${id}`);
    return session;
  };
  const chargeOf = (id: string) => {
    const session = sessionOf(id);
    const found = session.payment_intent ? charges.get(session.payment_intent) : undefined;
    if (!found) throw new Error(`fake Stripe: session ${id} has no charge`);
    return found;
  };
  const snapshot = <T>(value: T): T => structuredClone(value);

  return {
    url: base,
    secretKey,
    webhookSecret,
    env: { STRIPE_SECRET_KEY: secretKey, STRIPE_WEBHOOK_SECRET: webhookSecret, STRIPE_API_BASE: base },
    sessions,
    requests,
    pay(id, options = {}) {
      const session = sessionOf(id);
      if (session.status !== 'open') throw new Error(`fake Stripe: session ${id} is ${session.status}`);
      const paymentIntent = O.stripeId('pi');
      session.payment_intent = paymentIntent;
      session.status = 'complete';
      session.payment_status = options.delayed ? 'unpaid' : 'paid';
      session.url = null;
      const paid = O.charge(paymentIntent, session.amount_total, session.currency, intentMetadata.get(id) ?? {});
      if (options.delayed) paid.status = 'pending';
      charges.set(paymentIntent, paid);
      return O.event('checkout.session.completed', snapshot(session));
    },
    settleDelayed(id, succeeded) {
      const session = sessionOf(id);
      const paid = chargeOf(id);
      paid.status = succeeded ? 'succeeded' : 'failed';
      if (succeeded) session.payment_status = 'paid';
      return O.event(succeeded ? 'checkout.session.async_payment_succeeded' : 'checkout.session.async_payment_failed', snapshot(session));
    },
    expire(id) {
      const session = sessionOf(id);
      session.status = 'expired';
      session.url = null;
      return O.event('checkout.session.expired', snapshot(session));
    },
    refund(id, amount) {
      const paid = chargeOf(id);
      if (paid.amount_refunded + amount > paid.amount) throw new Error('fake Stripe: refund beyond the charge');
      const previous = { amount_refunded: paid.amount_refunded, refunded: paid.refunded };
      paid.amount_refunded += amount;
      paid.refunded = paid.amount_refunded === paid.amount;
      return O.event('charge.refunded', snapshot(paid), previous);
    },
    closeDispute(id, status, amount) {
      const paid = chargeOf(id);
      paid.disputed = true;
      return O.event('charge.dispute.closed', O.dispute(paid, amount ?? paid.amount, status), { status: 'under_review' });
    },
    async deliver(url, event, secret = webhookSecret) {
      const payload = JSON.stringify(event, null, 2);
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' }, body: payload });
      return { status: res.statusCode, body: await res.body.text() };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function safeForm(body: string): FormObject | undefined {
  try {
    return parseForm(body);
  } catch {
    return undefined;
  }
}
