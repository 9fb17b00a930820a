import { randomBytes } from 'node:crypto';

// Stripe's objects as its API writes them, with the fields the SDK's types declare (stripe-node
// src/resources/Checkout/Sessions.ts, Charges.ts, PaymentIntents.ts, Disputes.ts, Events.ts): ids with their prefixes,
// `object` names, amounts in the currency's smallest unit, times in Unix seconds, null where Stripe
// writes null. Only what a Checkout payment touches is filled in; the rest is Stripe's default.

export const API_VERSION = '2025-09-30.clover';

export const stripeId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const now = () => Math.floor(Date.now() / 1000);

export interface LineItem {
  quantity: number;
  price_data: { currency: string; unit_amount: number; product_data: { name: string } };
}

export interface CheckoutSessionInput {
  mode: string;
  line_items: LineItem[];
  success_url: string;
  cancel_url?: string;
  client_reference_id?: string;
  metadata?: Record<string, string>;
  payment_intent_data?: { metadata?: Record<string, string> };
  customer_email?: string;
}

export function checkoutSession(id: string, input: CheckoutSessionInput, url: string) {
  const total = input.line_items.reduce((sum, item) => sum + item.quantity * item.price_data.unit_amount, 0);
  const created = now();
  return {
    id,
    object: 'checkout.session' as const,
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: total,
    amount_total: total,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: input.cancel_url ?? null,
    client_reference_id: input.client_reference_id ?? null,
    client_secret: null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    created,
    currency: input.line_items[0]!.price_data.currency,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: null,
    customer_creation: 'if_required',
    customer_details: null,
    customer_email: input.customer_email ?? null,
    discounts: [],
    expires_at: created + 24 * 3600,
    invoice: null,
    invoice_creation: { enabled: false, invoice_data: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: null, metadata: {}, rendering_options: null } },
    livemode: false,
    locale: null,
    metadata: input.metadata ?? {},
    mode: input.mode,
    origin_context: null,
    // Created when the customer pays (API versions since 2022-08-01), not with the session.
    payment_intent: null as string | null,
    payment_link: null,
    payment_method_collection: 'if_required',
    payment_method_configuration_details: null,
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    payment_status: 'unpaid' as 'paid' | 'unpaid' | 'no_payment_required',
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: 'open' as 'open' | 'complete' | 'expired',
    submit_type: null,
    subscription: null,
    success_url: input.success_url,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: url as string | null,
    wallet_options: null,
  };
}
export type FakeCheckoutSession = ReturnType<typeof checkoutSession>;

export function charge(paymentIntent: string, amount: number, currency: string, metadata: Record<string, string>) {
  return {
    id: stripeId('ch'),
    object: 'charge' as const,
    amount,
    amount_captured: amount,
    amount_refunded: 0,
    balance_transaction: stripeId('txn'),
    captured: true,
    created: now(),
    currency,
    customer: null,
    description: null,
    disputed: false,
    failure_code: null,
    failure_message: null,
    livemode: false,
    metadata,
    paid: true,
    payment_intent: paymentIntent,
    payment_method: stripeId('pm'),
    receipt_url: null,
    refunded: false,
    status: 'succeeded',
  };
}
export type FakeCharge = ReturnType<typeof charge>;

/** The PaymentIntent behind a Checkout payment, as GET /v1/payment_intents/:id answers it (its charge is `latest_charge`). */
export function paymentIntent(of: FakeCharge) {
  return {
    id: of.payment_intent,
    object: 'payment_intent' as const,
    amount: of.amount,
    amount_received: of.status === 'succeeded' ? of.amount : 0,
    capture_method: 'automatic_async',
    client_secret: `${of.payment_intent}_secret_${stripeId('s').slice(2)}`,
    created: of.created,
    currency: of.currency,
    customer: null,
    description: null,
    latest_charge: of.id,
    livemode: false,
    metadata: of.metadata,
    payment_method: of.payment_method,
    payment_method_types: ['card'],
    status: of.status === 'succeeded' ? 'succeeded' : of.status === 'pending' ? 'processing' : 'requires_payment_method',
  };
}

export function dispute(of: FakeCharge, amount: number, status: 'lost' | 'won') {
  return {
    id: stripeId('dp'),
    object: 'dispute' as const,
    amount,
    balance_transactions: [],
    charge: of.id,
    created: now(),
    currency: of.currency,
    evidence_details: { due_by: now() + 7 * 86_400, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: of.payment_intent,
    reason: 'fraudulent',
    status,
  };
}

export function event(type: string, object: object, previousAttributes?: object) {
  return {
    id: stripeId('evt'),
    object: 'event' as const,
    api_version: API_VERSION,
    created: now(),
    data: { object, ...(previousAttributes ? { previous_attributes: previousAttributes } : {}) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}
export type FakeEvent = ReturnType<typeof event>;
