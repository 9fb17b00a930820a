import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ReferenceRules } from './core/provider-settings.ts';
import { MAX_BALANCE_USD, UNITS_PER_USD, type BillingUnit } from './lib/money.ts';
import { STRIPE_MAX_MINOR, unitsPerMinor } from './lib/minor-units.ts';
// Configuration is read once from the environment into a frozen object. An invalid value stops the
// process at start with a message naming the variable, instead of failing later mid-request.

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  dbPoolSize: number;
  /** Group-committed write batches one process runs at once on Postgres (SQLite has one writer). */
  writeBatchesInFlight: number;
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel: gateways sharing one Redis keep apart by it. */
  redisPrefix: string;
  adminToken: string | undefined;
  /** When set, GET /metrics needs `Authorization: Bearer <this>`. */
  metricsToken: string | undefined;
  publicBaseUrl: string;
  logLevel: string;
  nodeEnv: string;
  demo: boolean;
  rateLimitRpm: number;
  /** Requests per minute per key to the reads (balance, task status, models), counted apart from rateLimitRpm. */
  readRateLimitRpm: number;
  billingUnit: BillingUnit;
  creditsPerUsd: number;
  bodyLimitBytes: number;
  /** Slow or stalled clients: how long a client may take to send its request, and idle limits. */
  http: {
    /** The whole request, head and body; then 408 and the connection is closed. */
    requestTimeoutMs: number;
    /** The request head alone (at most requestTimeoutMs). */
    headersTimeoutMs: number;
    /** An idle keep-alive connection between requests. */
    keepAliveTimeoutMs: number;
    /** A connection on which nothing moves either way (covers a waiting synchronous text call). */
    idleTimeoutMs: number;
    /** A stream whose client takes none of the buffered events for this long is ended, its upstream call aborted. */
    streamStallMs: number;
  };
  /** Postgres: how long to wait for a new connection before a request fails with 503. */
  dbConnectTimeoutMs: number;
  keyCachePollMs: number;
  /** Jobs each process runs at once; 0 = this process runs no workers. */
  workers: number;
  /** Poll jobs each process runs at once, besides `workers`: they mostly wait on an upstream. */
  pollWorkers: number;
  /** Callback deliveries (and balance alerts) each process runs at once, besides `workers`: they wait on receivers. */
  webhookWorkers: number;
  jobLeaseMs: number;
  jobPollMs: number;
  simulatorLatencyMs: number;
  deadlineMs: { image: number; video: number; avatar: number };
  resultTtlSeconds: number;
  pricingFile: string | undefined;
  fileUrlSecret: string | undefined;
  filesDir: string;
  /** Where result files live: the local FILES_DIR, or S3 (FILES_STORE=s3://bucket[/prefix]). */
  files: {
    s3?: { bucket: string; prefix: string; region: string; endpoint?: string; accessKeyId?: string; secretAccessKey?: string };
    /** RESULT_MAX_BYTES: an upstream file larger than this fails its task. */
    maxBytes: number;
    /** Waits before each retry of a failed upstream download (5xx, connection errors). */
    fetchRetryDelaysMs: number[];
    /** Tests and private deployments only: caller-given URLs may name private addresses. */
    fetchAllowPrivate: boolean;
    sweepEveryMs: number;
  };
  relayPollMs: number;
  /** Video upstreams (ModelArk): polling, upstream callbacks, admission control. */
  upstreamTasks: {
    pollMs: number;
    maxPollMs: number;
    /** auto: callback_url sent only when PUBLIC_BASE_URL is a public https address; on; off. */
    callbacks: 'auto' | 'on' | 'off';
    /** Inbound upstream callbacks accepted per second per process (a callback only triggers a poll). */
    callbacksPerSecond: number;
    /** How soon a task held by admission control asks again for a slot. */
    admissionRetryMs: number;
    /** How long after our deadline a running upstream task is watched for its cancel. */
    cancelWatchMs: number;
  };
  upstreamTimeoutMs: number;
  /** Callers' reference files (image edits) downloaded to send upstream. */
  /** Reference downloads: the memory budget, the spool directory, deadlines and slots. */
  references: ReferenceRules;
  /** UPSTREAM_MAX_ANSWER_BYTES: an upstream answer read whole (JSON, base64 images) is cut off past this. */
  upstreamMaxAnswerBytes: number;
  /** How long a stored /v1/responses answer can be read back and continued (previous_response_id). */
  responsesTtlMs: number;
  /** CALL_LOG_DAYS: how long a call log row (modules/calls/) is kept before the sweeper deletes it. */
  callLogDays: number;
  /** CALL_BODY_MAX_BYTES: each body a `log_bodies` key's call stores (request, answer) is cut past this. */
  callBodyMaxBytes: number;
  /** A text call's hold still open after this long is one whose process died: it is given back. */
  textHoldMaxAgeMs: number;
  /**
   * Calls' worth of money each process holds at once per key and takes text calls' holds from
   * (text-money/floats.ts); 0 = one durable hold per call. Default 32 on SQLite, 0 on Postgres.
   */
  textFloatCalls: number;
  /** A float no call has used for this long is closed (its unspent money given back). */
  textFloatIdleMs: number;
  /** `gateway serve` forks this many processes sharing the port (0 = one process, no fork). */
  cluster: number;
  /** Fastify's trustProxy: addresses of proxies whose X-Forwarded-For names the client (sign-in limits). */
  trustProxy: string | undefined;
  console: {
    /** Wrong sign-in passwords per minute per client address (see console/sign-in-limits.ts). */
    signInRpm: number;
    sessionHours: number;
    /** The built console (vite build output); absent = the console is not served. */
    distDir: string;
  };
  /** Top-ups paid with Stripe Checkout (modules/topups/); undefined when STRIPE_SECRET_KEY is unset. */
  topups: TopupsConfig | undefined;
  /** Customers opening their own accounts (modules/signup/). */
  signup: {
    /** SIGNUP: closed = only operators make accounts; open = anyone with an email; invite = with an operator's invite. */
    mode: 'closed' | 'open' | 'invite';
    /** SIGNUP_CREDIT: credited to each new account, in the configured balance unit. */
    credit: number;
    /** Sign-up, verification and reset requests per minute per client address, and mails per minute per email. */
    rpm: number;
    verifyTtlMs: number;
    resetTtlMs: number;
    inviteTtlMs: number;
  };
  /** Outgoing mail (verification and reset links): a nodemailer transport URL; unset = no mail. */
  mail: { smtpUrl: string | undefined; from: string };
  /** Sign-in with an OpenID Connect provider; undefined when OIDC_ISSUER is unset. */
  oidc: OidcConfig | undefined;
  webhook: {
    /** Tests and private deployments only: let callbacks reach private and loopback addresses. */
    allowPrivate: boolean;
    /** Allowed ports; `*` allows any. */
    ports: number[] | '*';
    retryDelaysMs: number[];
    timeoutMs: number;
    /** Hosts that are this service (besides PUBLIC_BASE_URL's): never a callback target. */
    ownHosts: string[];
    /** How often workers look for accounts whose balance crossed below their alert_below. */
    balanceAlertCheckMs: number;
  };
}

export interface TopupsConfig {
  stripeSecretKey: string;
  stripeWebhookSecret: string;
  /** Where the Stripe SDK sends its calls (tests point it at a local fake). */
  stripeApiBase: { protocol: 'http' | 'https'; host: string; port: number };
  /** Lowercase ISO code; one unit of it buys the balance that one USD is (money.ts). */
  currency: string;
  /** In the configured balance unit. */
  min: number;
  max: number;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** How the gateway authenticates at the token endpoint, as the client was registered. */
  clientAuth: 'client_secret_basic' | 'client_secret_post';
  /** PUBLIC_BASE_URL/console/api/oidc/callback: the redirect URI registered at the provider. */
  redirectUrl: string;
  /** The provider's name on the sign-in button. */
  name: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`invalid configuration: ${variable} ${detail}`);
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function redisPrefix(env: Env): string {
  const value = str(env, 'REDIS_PREFIX', 'gw:');
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(value)) throw new ConfigError('REDIS_PREFIX', `must be 1-64 letters, digits or _.:-, got "${value}"`);
  return value;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function seconds(env: Env, name: string, fallback: number[]): number[] {
  const raw = optional(env, name);
  if (raw === undefined) return fallback.map((s) => s * 1000);
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) throw new ConfigError(name, `must be seconds separated by commas, got "${raw}"`);
  return parts.map((p) => Math.round(Number(p) * 1000));
}

/** One attempt's time: a positive number of seconds (0 would end every attempt before it began). */
function webhookTimeout(env: Env): number {
  const raw = optional(env, 'WEBHOOK_TIMEOUT');
  if (raw === undefined) return 10_000;
  const ms = Math.round(Number(raw.trim()) * 1000);
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || ms <= 0 || ms > 600_000) {
    throw new ConfigError('WEBHOOK_TIMEOUT', `must be one number of seconds above 0 and at most 600, got "${raw}"`);
  }
  return ms;
}

function ports(env: Env, name: string): number[] | '*' {
  const raw = str(env, name, '80,443').trim();
  if (raw === '*') return '*';
  const list = raw.split(',').map((p) => p.trim());
  if (list.some((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535)) {
    throw new ConfigError(name, `must be ports separated by commas, or *, got "${raw}"`);
  }
  return list.map(Number);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = str(env, name, fallback);
  if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

// What Fastify's trustProxy (proxy-addr) takes in a list: addresses, CIDRs (a prefix length or a
// netmask) and its names for ranges. Checked here, so a bad entry names the variable at start.
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

function proxyEntry(entry: string): boolean {
  if (PROXY_RANGES.includes(entry)) return true;
  const [address = '', range, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && net.isIPv4(range);
}

function trustProxy(env: Env): string | undefined {
  const raw = optional(env, 'TRUST_PROXY');
  if (raw === undefined) return undefined;
  const bad = raw.split(',').map((a) => a.trim()).find((entry) => !proxyEntry(entry));
  if (bad !== undefined) {
    throw new ConfigError('TRUST_PROXY', `must be proxy addresses or CIDRs separated by commas (or loopback, linklocal, uniquelocal), got "${bad}" in "${raw}"`);
  }
  return raw;
}

function httpTimeouts(env: Env): Config['http'] {
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000);
  return {
    requestTimeoutMs,
    headersTimeoutMs: Math.min(int(env, 'HEADERS_TIMEOUT_MS', 20_000, 100, 3_600_000), requestTimeoutMs),
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    idleTimeoutMs: int(env, 'IDLE_TIMEOUT_MS', 300_000, 1000, 3_600_000),
    streamStallMs: int(env, 'STREAM_STALL_SECONDS', 300, 1, 86_400) * 1000,
  };
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const databaseUrl = str(env, 'DATABASE_URL', 'sqlite:./data/gateway.db');
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', `must start with sqlite: or postgres://, got "${databaseUrl}"`);
  }
  const adminToken = optional(env, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long');
  }
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  const workers = int(env, 'WORKERS', 16, 0, 1000);
  const billingUnit = oneOf(env, 'BILLING_UNIT', 'usd', ['usd', 'credits'] as const);
  const creditsPerUsd = int(env, 'CREDITS_PER_USD', 1000, 1, 1_000_000);
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`, ['http:', 'https:'])!.replace(/\/+$/, '');
  const config: Config = {
    port,
    // Loopback by default: the quick start prints a funded demo key. Deployments set HOST=0.0.0.0.
    host: str(env, 'HOST', '127.0.0.1'),
    databaseUrl,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 500),
    writeBatchesInFlight: int(env, 'WRITE_BATCHES', 1, 1, 100),
    redisUrl: url(env, 'REDIS_URL', undefined, ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(env),
    adminToken,
    metricsToken: optional(env, 'METRICS_TOKEN'),
    publicBaseUrl,
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    nodeEnv,
    demo: bool(env, 'GATEWAY_DEMO', nodeEnv !== 'production'),
    rateLimitRpm: int(env, 'RATE_LIMIT_RPM', 600, 1, 10_000_000),
    readRateLimitRpm: int(env, 'READ_RATE_LIMIT_RPM', 30_000, 1, 10_000_000),
    billingUnit,
    creditsPerUsd,
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    http: httpTimeouts(env),
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3000, 100, 600_000),
    keyCachePollMs: int(env, 'KEY_CACHE_POLL_MS', 500, 50, 60_000),
    workers,
    pollWorkers: int(env, 'POLL_WORKERS', 256, 1, 10_000),
    webhookWorkers: int(env, 'WEBHOOK_WORKERS', 64, 1, 10_000),
    jobLeaseMs: int(env, 'JOB_LEASE_MS', 30_000, 100, 3_600_000),
    jobPollMs: int(env, 'JOB_POLL_MS', 200, 5, 60_000),
    simulatorLatencyMs: int(env, 'SIMULATOR_LATENCY_MS', 3000, 0, 3_600_000),
    deadlineMs: {
      image: int(env, 'TASK_DEADLINE_IMAGE_S', 600, 1, 86_400) * 1000,
      video: int(env, 'TASK_DEADLINE_VIDEO_S', 1800, 1, 86_400) * 1000,
      avatar: int(env, 'TASK_DEADLINE_AVATAR_S', 600, 1, 86_400) * 1000,
    },
    // RESULT_TTL_SECONDS is for tests that watch a link expire.
    resultTtlSeconds: int(env, 'RESULT_TTL_SECONDS', int(env, 'RESULT_TTL_HOURS', 24, 1, 24 * 365) * 3600, 1, 86_400 * 365),
    pricingFile: optional(env, 'PRICING_FILE'),
    fileUrlSecret: optional(env, 'FILE_URL_SECRET'),
    filesDir: str(env, 'FILES_DIR', './data/files'),
    files: {
      s3: s3Store(env),
      maxBytes: int(env, 'RESULT_MAX_BYTES', 2 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
      fetchRetryDelaysMs: seconds(env, 'RESULT_FETCH_RETRY_DELAYS', [1, 4]),
      fetchAllowPrivate: bool(env, 'FETCH_ALLOW_PRIVATE', false),
      sweepEveryMs: int(env, 'FILES_SWEEP_MS', 600_000, 10, 86_400_000),
    },
    relayPollMs: int(env, 'RELAY_POLL_MS', 2000, 10, 600_000),
    upstreamTasks: {
      pollMs: int(env, 'UPSTREAM_POLL_MS', 3000, 10, 600_000),
      maxPollMs: int(env, 'UPSTREAM_MAX_POLL_MS', 30_000, 10, 3_600_000),
      callbacks: oneOf(env, 'UPSTREAM_CALLBACKS', 'auto', ['auto', 'on', 'off'] as const),
      callbacksPerSecond: int(env, 'UPSTREAM_CALLBACKS_PER_SECOND', 200, 1, 1_000_000),
      admissionRetryMs: int(env, 'ADMISSION_RETRY_MS', 1000, 5, 600_000),
      cancelWatchMs: int(env, 'UPSTREAM_CANCEL_WATCH_S', 172_800, 1, 7 * 86_400) * 1000,
    },
    upstreamTimeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', 30_000, 100, 600_000),
    references: references(env, workers),
    upstreamMaxAnswerBytes: int(env, 'UPSTREAM_MAX_ANSWER_BYTES', 64 * 1024 ** 2, 1024, 2 * 1024 ** 3),
    responsesTtlMs: int(env, 'RESPONSES_TTL_HOURS', 720, 1, 24 * 3650) * 3_600_000,
    callLogDays: int(env, 'CALL_LOG_DAYS', 30, 1, 3650),
    callBodyMaxBytes: int(env, 'CALL_BODY_MAX_BYTES', 256 * 1024, 1024, 64 * 1024 ** 2),
    textHoldMaxAgeMs: int(env, 'TEXT_HOLD_MAX_AGE_S', 3600, 1, 7 * 86_400) * 1000,
    textFloatCalls: int(env, 'TEXT_FLOAT_CALLS', databaseUrl.startsWith('sqlite:') ? 32 : 0, 0, 10_000),
    textFloatIdleMs: int(env, 'TEXT_FLOAT_IDLE_MS', 2000, 10, 3_600_000),
    cluster: optional(env, 'CLUSTER') === 'auto' ? os.availableParallelism() : int(env, 'CLUSTER', 0, 0, 256),
    trustProxy: trustProxy(env),
    console: {
      signInRpm: int(env, 'CONSOLE_SIGNIN_RPM', 10, 1, 100_000),
      sessionHours: int(env, 'CONSOLE_SESSION_HOURS', 12, 1, 24 * 30),
      distDir: str(env, 'CONSOLE_DIST_DIR', './dist/console'),
    },
    topups: topups(env, billingUnit, creditsPerUsd),
    signup: signup(env),
    mail: mail(env, publicBaseUrl),
    oidc: oidc(env, publicBaseUrl),
    webhook: {
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      ports: ports(env, 'WEBHOOK_ALLOWED_PORTS'),
      retryDelaysMs: seconds(env, 'WEBHOOK_RETRY_DELAYS', [10, 30, 60]),
      timeoutMs: webhookTimeout(env),
      ownHosts: str(env, 'WEBHOOK_BLOCKED_HOSTS', '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      balanceAlertCheckMs: int(env, 'BALANCE_ALERT_CHECK_MS', 5000, 10, 3_600_000),
    },
  };
  return Object.freeze(config);
}

function signup(env: Env): Config['signup'] {
  const mode = oneOf(env, 'SIGNUP', 'closed', ['closed', 'open', 'invite'] as const);
  const rawCredit = str(env, 'SIGNUP_CREDIT', '0').trim();
  const credit = Number(rawCredit);
  if (!/^\d+(\.\d+)?$/.test(rawCredit) || credit > 1e9) {
    throw new ConfigError('SIGNUP_CREDIT', `must be a non-negative amount in the balance unit, got "${rawCredit}"`);
  }
  if (mode !== 'closed' && optional(env, 'SMTP_URL') === undefined) {
    throw new ConfigError('SMTP_URL', `must be set when SIGNUP is ${mode}: new accounts confirm their email through a mailed link`);
  }
  return {
    mode,
    credit,
    rpm: int(env, 'SIGNUP_RPM', 10, 1, 100_000),
    verifyTtlMs: int(env, 'SIGNUP_VERIFY_TTL_S', 86_400, 1, 30 * 86_400) * 1000,
    resetTtlMs: int(env, 'PASSWORD_RESET_TTL_S', 3600, 1, 7 * 86_400) * 1000,
    inviteTtlMs: int(env, 'SIGNUP_INVITE_TTL_HOURS', 168, 1, 24 * 3650) * 3_600_000,
  };
}

function mail(env: Env, publicBaseUrl: string): Config['mail'] {
  return {
    smtpUrl: url(env, 'SMTP_URL', undefined, ['smtp:', 'smtps:']),
    from: str(env, 'MAIL_FROM', `Generation Gateway <no-reply@${new URL(publicBaseUrl).hostname}>`),
  };
}

/**
 * OIDC_ISSUER turns provider sign-in on; the client id and secret must come with it. The issuer is
 * https, except on a loopback address (a provider on this machine, as in tests).
 */
function oidc(env: Env, publicBaseUrl: string): OidcConfig | undefined {
  const issuer = url(env, 'OIDC_ISSUER', undefined, ['https:', 'http:']);
  const clientId = optional(env, 'OIDC_CLIENT_ID');
  const clientSecret = optional(env, 'OIDC_CLIENT_SECRET');
  const clientAuth = oneOf(env, 'OIDC_CLIENT_AUTH', 'client_secret_basic', ['client_secret_basic', 'client_secret_post'] as const);
  const name = optional(env, 'OIDC_NAME');
  if (issuer === undefined) return undefined;
  const host = new URL(issuer).hostname;
  if (issuer.startsWith('http:') && !['localhost', '127.0.0.1', '[::1]'].includes(host)) {
    throw new ConfigError('OIDC_ISSUER', `must use https (http only on a loopback address), got "${issuer}"`);
  }
  if (!clientId) throw new ConfigError('OIDC_CLIENT_ID', 'must be set when OIDC_ISSUER is');
  if (!clientSecret) throw new ConfigError('OIDC_CLIENT_SECRET', 'must be set when OIDC_ISSUER is');
  return { issuer, clientId, clientSecret, clientAuth, redirectUrl: `${publicBaseUrl}/console/api/oidc/callback`, name: name ?? host };
}

function references(env: Env, workers: number): Config['references'] {
  // Half the worker slots at most wait on callers' hosts, so a slow host never stalls the rest.
  const downloads = int(env, 'REFERENCE_DOWNLOADS', Math.max(1, Math.floor(workers / 2)), 1, 10_000);
  return {
    memoryBytes: int(env, 'REFERENCE_MEMORY_MB', 256, 0, 1_000_000) * 1024 * 1024,
    spoolDir: str(env, 'REFERENCE_SPOOL_DIR', path.join(os.tmpdir(), 'gateway-references')),
    timeoutMs: int(env, 'REFERENCE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    minBytesPerSecond: int(env, 'REFERENCE_MIN_BYTES_PER_S', 16 * 1024, 0, 1024 ** 3),
    windowMs: int(env, 'REFERENCE_RATE_WINDOW_MS', 10_000, 100, 3_600_000),
    downloads,
    downloadsPerAccount: int(env, 'REFERENCE_DOWNLOADS_PER_ACCOUNT', Math.max(1, Math.ceil(downloads / 4)), 1, 10_000),
  };
}

function amount(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || Number(raw) <= 0) throw new ConfigError(name, `must be a positive amount, got "${raw}"`);
  return Number(raw);
}

/** Stripe top-ups: on when STRIPE_SECRET_KEY is set. Amounts are in the balance unit (5 and 1000 USD's worth by default). */
function topups(env: Env, billingUnit: BillingUnit, creditsPerUsd: number): Config['topups'] {
  const secret = optional(env, 'STRIPE_SECRET_KEY');
  const webhookSecret = optional(env, 'STRIPE_WEBHOOK_SECRET');
  const base = new URL(url(env, 'STRIPE_API_BASE', 'https://api.stripe.com', ['http:', 'https:'])!);
  const currency = str(env, 'TOPUP_CURRENCY', 'usd').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError('TOPUP_CURRENCY', `must be a three-letter ISO currency code, got "${currency}"`);
  const usd = billingUnit === 'usd' ? 1 : creditsPerUsd;
  const min = amount(env, 'TOPUP_MIN', 5 * usd);
  const max = amount(env, 'TOPUP_MAX', 1000 * usd);
  if (max < min) throw new ConfigError('TOPUP_MAX', `must not be below TOPUP_MIN (${min}), got ${max}`);
  // No single top-up may be more than a balance may hold (lib/money.ts).
  if (max > MAX_BALANCE_USD * usd) throw new ConfigError('TOPUP_MAX', `must be at most ${MAX_BALANCE_USD * usd}, the most a balance may hold, got ${max}`);
  // A larger amount would only be refused by Stripe when a customer tries it (a 502).
  const maxMinor = Math.round(((max / usd) * UNITS_PER_USD) / unitsPerMinor(currency));
  if (maxMinor > STRIPE_MAX_MINOR) throw new ConfigError('TOPUP_MAX', `must be at most ${((STRIPE_MAX_MINOR * unitsPerMinor(currency)) / UNITS_PER_USD) * usd} with TOPUP_CURRENCY=${currency}: Stripe charges at most ${STRIPE_MAX_MINOR} of its smallest unit at once, got ${max}`);
  if (secret === undefined) return undefined;
  if (webhookSecret === undefined) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be set with STRIPE_SECRET_KEY: without it no payment is ever credited');
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  const port = base.port ? Number(base.port) : protocol === 'http' ? 80 : 443;
  return { stripeSecretKey: secret, stripeWebhookSecret: webhookSecret, stripeApiBase: { protocol, host: base.hostname, port }, currency, min, max };
}

/** FILES_STORE=s3://<bucket>[/<prefix>] with the standard AWS variables; unset = the local FILES_DIR. */
function s3Store(env: Env): Config['files']['s3'] {
  const raw = optional(env, 'FILES_STORE');
  if (raw === undefined) return undefined;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!match) throw new ConfigError('FILES_STORE', `must be s3://<bucket>[/<prefix>], got "${raw}"`);
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return {
    bucket: match[1]!,
    prefix: prefix ? `${prefix}/` : '',
    region: str(env, 'AWS_REGION', str(env, 'AWS_DEFAULT_REGION', 'us-east-1')),
    endpoint: url(env, 'AWS_ENDPOINT_URL_S3', undefined, ['http:', 'https:']),
    accessKeyId: optional(env, 'AWS_ACCESS_KEY_ID'),
    secretAccessKey: optional(env, 'AWS_SECRET_ACCESS_KEY'),
  };
}
