import { Type } from 'typebox';
import { MAX_BALANCE_NOTE } from '../../lib/money.ts';

// Every write body takes only its documented fields: anything else is a 400 naming it, never a column.
const closed = { additionalProperties: false } as const;

const Amount = Type.Number({ minimum: 0, description: `In the configured balance unit (USD or credits); ${MAX_BALANCE_NOTE}` });

export const CreateUserBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  balance: Type.Optional(Amount),
}, closed);

export const TopUpBody = Type.Object({
  amount: Type.Number({ exclusiveMinimum: 0, description: `In the configured balance unit; the balance after it too: ${MAX_BALANCE_NOTE}` }),
  note: Type.Optional(Type.String({ maxLength: 500 })),
}, closed);

// Low-balance alert: one signed `balance.low` event when the balance crosses below alert_below.
export const AlertFields = {
  alert_below: Type.Optional(Type.Union([Amount, Type.Null()], { description: 'Alert when the balance falls below this amount (balance unit); null = off' })),
  alert_url: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'Where the signed balance.low event is POSTed (callback address rules)' })),
};
export const AlertBody = Type.Object(AlertFields, closed);

// PATCH /admin/users/:id: the alert, and the account's customer group.
export const UserPatchBody = Type.Object({
  ...AlertFields,
  status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: "disabled: every key of the account answers 401 and its console sessions end (what it started finishes and is billed); active gives the keys back",
    }),
  ),
  group: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "The customer group whose prices the account pays (GET /admin/groups); new calls pay them within a second, holds already taken keep their amount" })),
}, closed);

const GroupName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' });
const GroupModels = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500, description: 'Model ids its accounts may call (any other is a 403); empty or absent = every model' });
const GroupPrices = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Per model, the price its accounts pay instead of the base price times multiplier: any form the price table takes for a model (per_token, per_image, per_second, per_asset; USD), checked as the price table is',
});

export const GroupBody = Type.Object({
  name: GroupName,
  multiplier: Type.Number({ exclusiveMinimum: 0, maximum: 1000, description: 'Every base price times this, for models without an override' }),
  models: Type.Optional(GroupModels),
  prices: Type.Optional(GroupPrices),
}, closed);

export const Group = Type.Object(
  {
    name: Type.String(),
    multiplier: Type.Number(),
    models: Type.Array(Type.String(), { description: 'Empty = every model' }),
    prices: Type.Record(Type.String(), Type.Unknown(), { description: 'Per-model overrides (USD, the price table\'s shape)' }),
  },
  { $id: 'AdminGroup' },
);

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'Rows per page, from 1 (default 100, at most 1000)' })),
  after: Type.Optional(Type.String({ maxLength: 100 })),
});

export const User = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.String(),
    balance: Type.Number(),
    balance_credits: Type.Integer(),
    used: Type.Number(),
    used_credits: Type.Integer(),
    alert_below: Type.Union([Type.Number(), Type.Null()]),
    alert_url: Type.Union([Type.String(), Type.Null()]),
    group: Type.String({ description: 'The customer group whose prices the account pays' }),
    created_at: Type.Integer(),
  },
  { $id: 'AdminUser' },
);

const RateLimit = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()], {
  description: 'Requests per minute for this key; null uses RATE_LIMIT_RPM',
});

// Key policy (accounts/key-policy.ts): the same three fields on every key write, admin and console.
export const PolicyFields = {
  models: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500, description: 'Model ids the key may use (aliases become their id); empty = every model' })),
  allowed_ips: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 60 }), { maxItems: 200, description: 'IPv4/IPv6 addresses or CIDRs the key may be used from (the client address as TRUST_PROXY defines it); empty = anywhere' })),
  expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000_000_000 }), Type.Null()], { description: 'Unix seconds after which the key is refused (401); null = never' })),
};

const Policy = Type.Object({
  models: Type.Array(Type.String()),
  allowed_ips: Type.Array(Type.String()),
  expires_at: Type.Union([Type.Integer(), Type.Null()]),
});

export const LogBodies = Type.Boolean({ description: "Store each call's request and answer with the call log (secrets redacted), for disputes; default false" });

export const CreateKeyBody = Type.Object({
  user_id: Type.String({ minLength: 1, maxLength: 100 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  quota: Type.Optional(Amount),
  unlimited: Type.Optional(Type.Boolean()),
  rate_limit_rpm: Type.Optional(RateLimit),
  log_bodies: Type.Optional(LogBodies),
  ...PolicyFields,
}, closed);

export const UpdateKeyBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')])),
  quota: Type.Optional(Amount),
  rate_limit_rpm: Type.Optional(RateLimit),
  log_bodies: Type.Optional(LogBodies),
  ...PolicyFields,
}, closed);

// Each model's prices are checked when saved: their shape (billing/price-schema.ts) and that they quote every call the catalogue allows at a sane amount (billing/price-rules.ts).
export const PricesBody = Type.Object({ models: Type.Record(Type.String(), Type.Unknown()) }, closed);

export const KeysQuery = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const Key = Type.Object(
  {
    id: Type.String(),
    user_id: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    status: Type.String(),
    unlimited: Type.Boolean(),
    quota: Type.Union([Type.Number(), Type.Null()]),
    quota_used: Type.Number(),
    rate_limit_rpm: Type.Union([Type.Integer(), Type.Null()]),
    log_bodies: Type.Boolean({ description: "Each call's request and answer are stored with the call log" }),
    models: Type.Array(Type.String(), { description: 'Empty = every model' }),
    allowed_ips: Type.Array(Type.String(), { description: 'Empty = any address' }),
    expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null = never' }),
    operator_policy: Type.Union([Policy, Type.Null()], { description: 'What the operator set: the account holder may narrow the key inside it, never widen it' }),
    created_at: Type.Integer(),
  },
  { $id: 'AdminKey' },
);

export const CreatedKey = Type.Intersect([
  Key,
  Type.Object({ key: Type.String({ description: 'The secret key; shown only in this response' }) }),
]);

export const TasksQuery = Type.Object({
  user_id: Type.Optional(Type.String({ maxLength: 100 })),
  before: Type.Optional(Type.String({ maxLength: 100 })),
});

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  round: Type.Integer({ description: 'Bumped by each redelivery' }),
  url: Type.String(),
  at: Type.Integer({ description: 'Unix time, ms' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  outcome: Type.String({ description: 'delivered, retry, dropped, failed (4xx) or refused (address rules)' }),
});
