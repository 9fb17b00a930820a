import { Type } from 'typebox';
import { MAX_BALANCE_NOTE } from '../../lib/money.ts';

// Top-ups paid with Stripe Checkout: an account holder starts one, Stripe's events settle it.
const closed = { additionalProperties: false } as const;
const Seconds = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description: `Unix seconds; ${description}` });

export const TopupBody = Type.Object({
  amount: Type.Number({ exclusiveMinimum: 0, description: `What to add to the balance, in the configured balance unit (from TOPUP_MIN to TOPUP_MAX; the balance after it too: ${MAX_BALANCE_NOTE})` }),
}, closed);

export const CreatedTopup = Type.Object({
  id: Type.String(),
  checkout_url: Type.String({ description: "Stripe Checkout's page: send the browser there to pay" }),
});

export const TopupStatus = Type.Union(
  ['pending', 'paid', 'partially_refunded', 'refunded', 'disputed', 'failed', 'expired'].map((s) => Type.Literal(s)),
  { description: 'pending until Stripe says the payment succeeded (paid), failed or the checkout expired; refunds and a lost dispute take the money back' },
);

export const Topup = Type.Object(
  {
    id: Type.String(),
    user_id: Type.String(),
    amount: Type.Number({ description: 'Added to the balance once paid, in the configured balance unit' }),
    price: Type.Object({ amount: Type.Number({ description: 'What the checkout charges, in the currency' }), currency: Type.String({ description: 'Lowercase ISO code' }) }),
    status: TopupStatus,
    refunded: Type.Number({ description: 'Taken back for refunds, in the balance unit' }),
    disputed: Type.Number({ description: 'Taken back for a lost dispute, in the balance unit' }),
    created_at: Type.Integer({ description: 'Unix seconds' }),
    paid_at: Seconds('null until paid'),
    updated_at: Type.Integer({ description: 'Unix seconds' }),
  },
  { $id: 'Topup' },
);

const Next = Type.Union([Type.String(), Type.Null()], { description: 'Pass as `after` for the next page; null on the last' });
export const TopupList = Type.Object({ data: Type.Array(Topup), next: Next });

const paging = {
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'Rows per page (default 50, at most 500)' })),
  after: Type.Optional(Type.String({ maxLength: 100, description: "The previous page's `next`" })),
};
export const AccountTopupsQuery = Type.Object(paging);
export const AdminTopupsQuery = Type.Object({ user_id: Type.Optional(Type.String({ maxLength: 100 })), ...paging });

export const WebhookReceived = Type.Object({ received: Type.Boolean() });

/** What the console needs to offer top-ups; null when they are off. */
export const TopupSettings = Type.Union(
  [
    Type.Object({
      min: Type.Number({ description: 'TOPUP_MIN, in the balance unit' }),
      max: Type.Number({ description: 'TOPUP_MAX, in the balance unit' }),
      currency: Type.String({ description: 'TOPUP_CURRENCY' }),
    }),
    Type.Null(),
  ],
  { description: 'Top-ups with Stripe: their limits, or null when STRIPE_SECRET_KEY is unset' },
);
