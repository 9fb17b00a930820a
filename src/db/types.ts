import type { TaskKind } from '../core/task-params.ts';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { KeyStatus } from '../core/key.ts';

// Timestamps are Unix milliseconds and money is integer ledger units (1 USD = 1,000,000) on both
// dialects, so the same arithmetic and comparisons work everywhere.

export interface UsersTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  balance: number;
  used: number;
  created_at: number;
  updated_at: number;
  /** Standard Webhooks signing secret (`whsec_...`), made on first use. */
  webhook_secret: Generated<string | null>;
  /** Low-balance alert (webhooks/balance-alerts.ts): threshold in ledger units, target, 1 once sent. */
  alert_below: Generated<number | null>;
  alert_url: Generated<string | null>;
  alert_sent: Generated<number>;
  /** The customer group whose prices the account pays (modules/groups/). */
  group_name: Generated<string>;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  status: KeyStatus;
  unlimited: number;
  quota_remain: number;
  quota_used: number;
  rate_limit_rpm: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /** Key policy (accounts/key-policy.ts): JSON arrays, null = no limit; expires_at in ms. */
  models: Generated<string | null>;
  allowed_ips: Generated<string | null>;
  expires_at: Generated<number | null>;
  /** JSON of the policy the operator last set: an account holder may narrow it, never widen it. */
  policy_ceiling: Generated<string | null>;
  /** 1: the request and answer of each logged call are stored (modules/calls/call-bodies.ts). */
  log_bodies: Generated<number>;
}

/** `overrun`: what a call used beyond its hold, charged even below zero. */
/** `reversal`: a paid top-up taken back (refunded or lost in a dispute), below zero if need be. */
export type LedgerKind = 'topup' | 'adjustment' | 'key_quota' | 'hold' | 'settle' | 'refund' | 'charge' | 'overrun' | 'reversal';

export interface LedgerTable {
  id: Generated<number>;
  user_id: string;
  key_id: string | null;
  kind: LedgerKind;
  balance_delta: number;
  used_delta: number;
  key_remain_delta: number;
  key_used_delta: number;
  ref: string | null;
  note: string | null;
  created_at: number;
}

export interface MetaTable {
  name: string;
  value: string;
}

export type TaskStatus = 'submitted' | 'processing' | 'completed' | 'failed';
export type { TaskKind };

export interface TasksTable {
  id: string;
  user_id: string;
  key_id: string;
  kind: TaskKind;
  model: string;
  /** The normalized request, JSON. */
  params: string;
  status: TaskStatus;
  progress: number;
  channel_id: string | null;
  /** The upstream's own id for this task (relay channels). */
  upstream_id: string | null;
  hold_amount: number;
  key_limited: number;
  cost: number | null;
  webhook: string | null;
  /** JSON of the task record's `result`. */
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  started_at: number | null;
  /** When the upstream expects to finish; progress is interpolated towards it. */
  eta_at: number | null;
  deadline_at: number;
  completed_at: number | null;
  updated_at: number;
  /** Bumped by each operator redelivery; attempts are counted per round. */
  webhook_round: Generated<number>;
  /** Tokens the upstream counted (per-token models); null when it counted none. */
  input_tokens: number | null;
  output_tokens: number | null;
}

export type JobKind = 'dispatch' | 'poll' | 'deliver' | 'alert' | 'cancel';

export interface JobsTable {
  id: Generated<number>;
  kind: JobKind;
  task_id: string;
  run_at: number;
  attempts: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
}

export interface ChannelsTable {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  secret: string | null;
  /** JSON array of the model ids it serves. */
  models: string;
  /** JSON object: our model id -> the upstream's name for it. */
  model_mapping: string;
  priority: number;
  weight: number;
  status: 'enabled' | 'disabled';
  /** JSON object: the type's own settings (checked by its registry entry's schema; secrets included). */
  options: Generated<string>;
  /** Submits in a row that failed before the upstream accepted them (reset by an accepted one). */
  health_failures: Generated<number>;
  /** The last such failure, or the 401/403 that set needs_attention; never the upstream's text about a secret. */
  health_error: string | null;
  health_error_at: number | null;
  /** 1 after the upstream refused the channel's credentials (401/403), until it accepts a task or the channel is changed. */
  needs_attention: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  task_id: string;
  round: number;
  attempt: number;
  url: string;
  at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** delivered | retry | dropped | failed | refused (address rules, at submit or at a connection) */
  outcome: string;
}

export interface AssetGroupsTable {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  /** Always `AIGC` for groups made by avatar submits. */
  kind: string;
  project_name: string;
  created_at: number;
}

/** `Pending` while its review runs; then `Active` or `Failed`. */
export type AssetStatus = 'Pending' | 'Active' | 'Failed';

export interface AssetsTable {
  id: string;
  user_id: string;
  group_id: string;
  task_id: string;
  name: string;
  url: string;
  asset_type: 'Image' | 'Video' | 'Audio';
  status: AssetStatus;
  created_at: number;
  updated_at: number;
}

/** One synchronous text call, as billed. */
export interface UsageTable {
  id: Generated<number>;
  user_id: string;
  key_id: string;
  model: string;
  endpoint: string;
  request_id: string;
  /** The uncached prompt tokens. */
  input_tokens: number;
  output_tokens: number;
  cost: number;
  cache_read_tokens: ColumnType<number, number | undefined, number>;
  cache_write_tokens: ColumnType<number, number | undefined, number>;
  /** The reasoning or thinking part of output_tokens (not billed twice). */
  reasoning_tokens: ColumnType<number, number | undefined, number>;
  /** Of `cost`, each class's part (their sum is `cost`). */
  input_cost: ColumnType<number, number | undefined, number>;
  cache_read_cost: ColumnType<number, number | undefined, number>;
  cache_write_cost: ColumnType<number, number | undefined, number>;
  output_cost: ColumnType<number, number | undefined, number>;
  /** ok | failed | aborted | lost (its process ended mid-call; the hold was given back) */
  status: string;
  created_at: number;
}

/** A synchronous text call's hold while the call runs (the ledger has the hold itself). */
export interface TextHoldsTable {
  call_id: string;
  user_id: string;
  key_id: string;
  key_limited: number;
  amount: number;
  model: string;
  endpoint: string;
  request_id: string;
  created_at: number;
  /** What the calls settled from this hold cost (a float's; a single call's hold keeps 0). */
  spent: Generated<number>;
}

/** Console sign-in of an account holder (the operator signs in with ADMIN_TOKEN instead). */
export interface ConsoleCredentialsTable {
  user_id: string;
  /** Lower-cased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash`, base64url parts. */
  password_hash: string;
  created_at: number;
  updated_at: number;
  /** When the holder confirmed the email (ms); null = not yet, and the account cannot sign in. */
  email_verified_at: number | null;
}

export interface ConsoleSessionsTable {
  /** sha256 of the cookie's token: a leaked table row cannot be replayed as a cookie. */
  token_hash: string;
  role: 'account' | 'operator';
  /** null for operator sessions. */
  user_id: string | null;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** An identity at an OpenID Connect provider linked to an account (modules/oidc/). */
export interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  /** The email the provider gave when the identity was linked, lower-cased (for the operator's eyes). */
  email: string | null;
  created_at: number;
}

/** A provider sign-in under way, keyed by the SHA-256 of its browser cookie's token. */
export interface OidcLoginsTable {
  token_hash: string;
  state: string;
  nonce: string;
  code_verifier: string;
  invite: string | null;
  created_at: number;
  expires_at: number;
}

/** A low-balance alert to deliver (job kind `alert`, task_id = its id). */
export interface BalanceAlertsTable {
  id: string;
  user_id: string;
  url: string;
  balance: number;
  threshold: number;
  created_at: number;
}

/** A stored /v1/responses answer (modules/responses). */
export interface ResponsesTable {
  id: string;
  user_id: string;
  /** The Response object, JSON. */
  response: string;
  /** The turns before this answer (`{turns: TextMessage[]}`, neutral, JSON; rows from before that change hold one array with the answer's turn). */
  conversation: string;
  /** The channel whose upstream keeps this response too (a follow-up goes back to it); null: only we do. */
  channel_id: string | null;
  created_at: number;
  expires_at: number;
}

/** A redemption code (modules/codes/): its SHA-256 only; `used` of `uses` accounts credited; times in ms. */
export interface RedeemCodesTable {
  id: string;
  batch_id: string;
  code_hash: string;
  amount: number;
  uses: number;
  used: Generated<number>;
  expires_at: number | null;
  revoked_at: Generated<number | null>;
  note: string | null;
  created_at: number;
}

/** A customer group (modules/groups/): `models` a JSON array (null = all), `prices` JSON per-model overrides; times in ms. */
export interface GroupsTable {
  name: string;
  multiplier: number;
  models: string | null;
  prices: string | null;
  created_at: number;
  updated_at: number;
}

/** One account's redemption of a code: the primary key (code_id, user_id) allows it once. */
export interface RedemptionsTable {
  code_id: string;
  user_id: string;
  created_at: number;
}

export type TopupStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'disputed' | 'failed' | 'expired';

/** A Stripe Checkout top-up (modules/topups/): amounts in ledger units, `price` in the currency's smallest unit; times in ms. */
export interface TopupsTable {
  id: string;
  user_id: string;
  amount: number;
  price: number;
  currency: string;
  status: TopupStatus;
  session_id: string | null;
  payment_intent: string | null;
  refunded: Generated<number>;
  disputed: Generated<number>;
  created_at: number;
  updated_at: number;
  paid_at: number | null;
}

/** One call in the call log (modules/calls/): times in ms; usage and cost JSON per token class, ledger units. */
export interface CallsTable {
  id: string;
  time: number;
  user_id: string;
  key_id: string;
  model: string | null;
  surface: string;
  channel_id: string | null;
  channel_name: string | null;
  channel_type: string | null;
  /** ok | failed | refused | aborted */
  status: string;
  http_status: number;
  /** JSON {code, message}, or null. */
  error: string | null;
  latency_ms: number;
  first_token_ms: number | null;
  usage: string | null;
  cost: string | null;
  task_id: string | null;
  /** The result store key of the call's request and answer (a key with log_bodies), or null. */
  bodies: string | null;
}

/** A mailed link's token (modules/signup/): its SHA-256 only; single use, expiring; times in ms. */
export interface SignupTokensTable {
  token_hash: string;
  purpose: 'verify' | 'reset';
  user_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** An operator's invite for SIGNUP=invite: its code's SHA-256, the email it is bound to (or null); times in ms. */
export interface InvitesTable {
  id: string;
  code_hash: string;
  email: string | null;
  created_at: number;
  expires_at: number | null;
  used_at: number | null;
  used_by: string | null;
  revoked_at: number | null;
}

export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  meta: MetaTable;
  tasks: TasksTable;
  jobs: JobsTable;
  channels: ChannelsTable;
  webhook_attempts: WebhookAttemptsTable;
  asset_groups: AssetGroupsTable;
  assets: AssetsTable;
  usage: UsageTable;
  text_holds: TextHoldsTable;
  console_credentials: ConsoleCredentialsTable;
  console_sessions: ConsoleSessionsTable;
  balance_alerts: BalanceAlertsTable;
  responses: ResponsesTable;
  redeem_codes: RedeemCodesTable;
  redemptions: RedemptionsTable;
  groups: GroupsTable;
  calls: CallsTable;
  topups: TopupsTable;
  signup_tokens: SignupTokensTable;
  invites: InvitesTable;
  oidc_identities: OidcIdentitiesTable;
  oidc_logins: OidcLoginsTable;
}

export type User = Selectable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
export type LedgerRow = Selectable<LedgerTable>;
export type RedeemCode = Selectable<RedeemCodesTable>;
export type Topup = Selectable<TopupsTable>;
export type Invite = Selectable<InvitesTable>;
export type Task = Selectable<TasksTable>;
export type Job = Selectable<JobsTable>;
export type Asset = Selectable<AssetsTable>;
export type AssetGroup = Selectable<AssetGroupsTable>;
