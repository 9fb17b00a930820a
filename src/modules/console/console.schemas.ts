import { Type } from 'typebox';
import { MAX_BALANCE_NOTE } from '../../lib/money.ts';
import { LogBodies, PolicyFields } from '../admin/admin.schemas.ts';
import { TopupSettings } from '../topups/topups.schemas.ts';

// Every write body takes only its documented fields: anything else is a 400 naming it.
const closed = { additionalProperties: false } as const;

export const AccountSignInBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1000 }),
}, closed);

export const OperatorSignInBody = Type.Object({ admin_token: Type.String({ minLength: 1, maxLength: 1000 }) }, closed);

export const BillingUnit = Type.Union([Type.Literal('usd'), Type.Literal('credits')], { description: 'BILLING_UNIT: the unit of every amount (balances, costs, quotas)' });

export const Session = Type.Object({
  role: Type.Union([Type.Literal('account'), Type.Literal('operator')]),
  user_id: Type.Union([Type.String(), Type.Null()]),
  csrf_token: Type.String({ description: 'Send it back in the x-csrf-token header on every POST, PATCH and DELETE' }),
  billing_unit: BillingUnit,
  topups: TopupSettings,
});

export const Account = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  remain_balance: Type.Number({ description: 'As GET /user/balance' }),
  remain_credits: Type.Integer(),
  used_balance: Type.Number(),
  used_credits: Type.Integer(),
  alert_below: Type.Union([Type.Number(), Type.Null()], { description: 'Low-balance alert threshold; null = off' }),
  alert_url: Type.Union([Type.String(), Type.Null()]),
  billing_unit: BillingUnit,
});

export const NewKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  quota: Type.Optional(Type.Number({ minimum: 0, description: `In the balance unit; omit with unlimited: true; ${MAX_BALANCE_NOTE}` })),
  unlimited: Type.Optional(Type.Boolean()),
  rate_limit_rpm: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()], { description: 'Requests a minute to the calls that spend; at most RATE_LIMIT_RPM (403 above it); null or absent = RATE_LIMIT_RPM' })),
  log_bodies: Type.Optional(LogBodies),
  ...PolicyFields,
}, closed);

/** A holder's change to an own key: its status, body capture, and its policy inside the operator's. */
export const KeyStatusBody = Type.Object({ status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')])), log_bodies: Type.Optional(LogBodies), ...PolicyFields }, closed);

export const KeyUsage = Type.Object({
  key_id: Type.String(),
  name: Type.String(),
  status: Type.String(),
  text_calls: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  text_cost: Type.Number(),
  cache_read_tokens: Type.Integer({ description: 'Prompt tokens read from a prompt cache (not in input_tokens)' }),
  cache_write_tokens: Type.Integer({ description: 'Prompt tokens written into a prompt cache (not in input_tokens)' }),
  text_cost_by_class: Type.Object(
    { input: Type.Number(), cache_read: Type.Number(), cache_write: Type.Number(), output: Type.Number() },
    { description: "Of text_cost, each token class's part" },
  ),
  tasks: Type.Integer(),
  task_cost: Type.Number(),
});

const UnixSeconds = Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' });
export const UsageCsvQuery = Type.Object({ from: Type.Optional(UnixSeconds), to: Type.Optional(UnixSeconds) });
export const AdminUsageCsvQuery = Type.Object({ user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), from: Type.Optional(UnixSeconds), to: Type.Optional(UnixSeconds) });

export const TasksQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 100 })) });

const TaskUsage = Type.Union([Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() }), Type.Null()], {
  description: 'Tokens the upstream counted (per-token models such as imglite-3.1); null when it counted none',
});

export const TaskRow = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    model: Type.String(),
    status: Type.String(),
    created: Type.Integer(),
    cost: Type.Union([Type.Number(), Type.Null()]),
    key: Type.Union([Type.Object({ name: Type.String(), prefix: Type.String() }), Type.Null()], { description: 'The key it was submitted with (never the secret)' }),
    prompt: Type.Union([Type.String(), Type.Null()], { description: 'The prompt as submitted, cut at 1,000 characters; null when the task has none' }),
    callback: Type.Union([Type.String(), Type.Null()]),
    callback_refused: Type.Union([Type.Object({ url: Type.String(), reason: Type.String() }), Type.Null()], {
      description: 'The callback address given at submit or delivery was refused by the address rules: no callback is sent',
    }),
    usage: TaskUsage,
    images: Type.Array(Type.String(), { description: 'Result image links (signed, expiring)' }),
    videos: Type.Array(Type.String()),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const Attempt = Type.Object({
  round: Type.Integer(),
  attempt: Type.Integer(),
  url: Type.String(),
  at: Type.Integer({ description: 'Unix time, ms' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  outcome: Type.String(),
});

export const SigningSecret = Type.Object({ secret: Type.String({ description: 'Standard Webhooks secret (whsec_...)' }) });

export const CredentialsBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1000 }),
}, closed);

export const StatsQuery = Type.Object({ days: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })) });

export const DayTotals = Type.Object({
  date: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
  requests: Type.Integer({ description: 'Billed calls: text calls that were charged and task submits. Refused requests (4xx before billing) are not counted' }),
  spend: Type.Number({ description: 'In the balance unit' }),
  completed: Type.Integer(),
  failed: Type.Integer(),
});
