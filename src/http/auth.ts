import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';
import type { CachedKey } from '../core/key.ts';
import { addressAllowed, modelAllowed } from '../modules/accounts/key-policy.ts';
import type { RateDecision } from '../lib/rate-limiter.ts';
import { forbidden, rateLimited, unauthorized } from '../core/errors.ts';
import type { KeySource } from './surface.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: CachedKey;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const VENDOR_HEADERS = ['x-api-key', 'x-goog-api-key'] as const;

/**
 * The key, from the sources the route declares (http/surface.ts: Bearer everywhere,
 * `x-api-key` on the messages routes, `x-goog-api-key` and `?key=` on the native ones). A vendor's
 * header is read before Bearer, whatever the declared order.
 */
export function extractKey(request: FastifyRequest, sources: readonly KeySource[]): string | undefined {
  for (const name of VENDOR_HEADERS) {
    if (!sources.includes(name)) continue;
    const header = request.headers[name];
    if (typeof header === 'string' && header.trim() !== '') return header.trim();
  }
  if (sources.includes('query')) {
    const query = (request.query as { key?: unknown } | undefined)?.key;
    if (typeof query === 'string' && query !== '') return query;
  }
  const authorization = request.headers.authorization;
  if (!authorization || !sources.includes('bearer')) return undefined;
  return BEARER.exec(authorization)?.[1];
}

const ASKED: Record<KeySource, string> = {
  bearer: 'the header Authorization: Bearer <key>',
  'x-api-key': 'the header x-api-key: <key>',
  'x-goog-api-key': 'the header x-goog-api-key: <key>',
  query: 'the query parameter key=<key>',
  session: 'a console session',
};
// Bearer only: the default for a route added without a declaration (app.ts refuses those of the app's own plugins).
const BEARER_ONLY: readonly KeySource[] = ['bearer'];

// A key's SHA-256 is what the key cache is indexed by. Hashing it on every request was ~2% of a
// text call's CPU; the digests of the keys in use are kept (bounded: cleared when full), with their
// hex form, which the cache is keyed by.
const digests = new Map<string, { bytes: Buffer; hex: string }>();
const MAX_DIGESTS = 10_000;

function keyDigest(token: string): { bytes: Buffer; hex: string } {
  let found = digests.get(token);
  if (!found) {
    if (digests.size >= MAX_DIGESTS) digests.clear();
    const bytes = createHash('sha256').update(token).digest();
    found = { bytes, hex: bytes.toString('hex') };
    digests.set(token, found);
  }
  return found;
}

export interface KeyGuardOptions {
  /** The balance routes answer a deleted key with 200 `{success:false}` instead of 401. */
  allowDeleted?: boolean;
  /** The model the call uses, checked against the key's `models` before any hold (key-policy.ts). */
  model?: ModelOf;
  /**
   * A read that spends nothing (balance, task status, the model list): counted against the key's
   * read budget (READ_RATE_LIMIT_RPM), apart from its limit for calls that spend, so a client that
   * polls many open tasks neither runs out of reads nor uses up the calls it pays for.
   */
  read?: boolean;
}

export type ModelOf = (request: FastifyRequest) => string | undefined;

/** The body's `model` (before validation: a non-string is left to the schema's 400), or `fallback`. */
export const bodyModel = (fallback?: string): ModelOf => (request) => {
  const model = (request.body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : model === undefined ? fallback : undefined;
};
export const fixedModel = (model: string): ModelOf => () => model;
/** `{model}:{method}` of the native routes' wildcard. */
export const pathModel: ModelOf = (request) => {
  const target = (request.params as { '*'?: string })['*'] ?? '';
  const at = target.lastIndexOf(':');
  try {
    return decodeURIComponent(at > 0 ? target.slice(0, at) : target);
  } catch {
    return undefined;
  }
};

/** Authenticates the key (from the sources the route declares) and applies its rate limit. */
export function keyGuard(ctx: AppContext, options: KeyGuardOptions = {}): preValidationAsyncHookHandler {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const sources = request.routeOptions.config.keySources ?? BEARER_ONLY;
    const token = extractKey(request, sources);
    if (!token) throw unauthorized(`Missing API key: send ${ASKED[sources[0] ?? 'bearer']}`);
    const digest = keyDigest(token);
    const key = ctx.keyCache.cached(digest.hex) ?? (await ctx.keyCache.lookup(digest.hex));
    assertUsable(key, digest.bytes, options);
    if (key.policy) assertPolicy(key, request, options);
    request.apiKey = key;
    const budget = budgetOf(ctx, key, options.read === true);
    // Counted in memory (one process without Redis) the limit needs no wait.
    const decision = ctx.rateLimiter.hitNow?.(budget.counter, budget.limit);
    if (decision) applyRateLimit(decision, reply);
    else await limitLater(ctx, budget, request, reply);
  };
}

function assertUsable(key: CachedKey | undefined, digest: Buffer, options: KeyGuardOptions): asserts key is CachedKey {
  if (!key || !timingSafeEqual(key.hashBytes, digest)) throw unauthorized('Invalid API key');
  if (key.status === 'disabled') throw unauthorized('This API key is disabled');
  if (key.status === 'deleted' && !options.allowDeleted) throw unauthorized('This API key has been deleted');
}

/** The key's policy: expired is 401; an address or a model outside its lists is 403. */
function assertPolicy(key: CachedKey, request: FastifyRequest, options: KeyGuardOptions): void {
  const policy = key.policy!;
  if (key.status === 'deleted') return;
  if (policy.expiresAtMs !== undefined && Date.now() >= policy.expiresAtMs) {
    throw unauthorized(`This API key expired at ${new Date(policy.expiresAtMs).toISOString()}`);
  }
  if (policy.addresses && !addressAllowed(policy.addresses, request.ip)) {
    throw forbidden(`This API key may not be used from ${request.ip}`);
  }
  const model = policy.models && options.model?.(request);
  if (model !== undefined && !modelAllowed(policy, model)) throw forbidden(`This API key may not use the model ${model}`);
}

interface Budget {
  /** The limiter's counter: the key's id for calls that spend, `read:` and the id for reads. */
  counter: string;
  limit: number;
}

/**
 * Calls that spend: the key's own `rate_limit_rpm`, else RATE_LIMIT_RPM. Reads: READ_RATE_LIMIT_RPM,
 * or the key's own limit when an operator gave it a larger one.
 */
function budgetOf(ctx: AppContext, key: CachedKey, read: boolean): Budget {
  const spend = key.rate_limit_rpm ?? ctx.config.rateLimitRpm;
  return read
    ? { counter: `read:${key.id}`, limit: Math.max(ctx.config.readRateLimitRpm, spend) }
    : { counter: key.id, limit: spend };
}

/** The rate limit when it must wait (counted in Redis). */
async function limitLater(ctx: AppContext, { counter, limit }: Budget, request: FastifyRequest, reply: FastifyReply) {
  const limiter = ctx.rateLimiter;
  let decision: RateDecision;
  try {
    decision = limiter.hitNow?.(counter, limit) ?? (await limiter.hit(counter, limit));
  } catch (err) {
    // A limiter outage must not take the paid API down with it: let the request through, loudly.
    request.log.warn({ err, reqId: request.id }, 'rate limiter unavailable; request allowed');
    return;
  }
  applyRateLimit(decision, reply);
}

function applyRateLimit(decision: RateDecision, reply: FastifyReply) {
  const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
  reply.header('ratelimit-limit', decision.limit);
  reply.header('ratelimit-remaining', decision.remaining);
  reply.header('ratelimit-reset', resetSeconds);
  if (!decision.allowed) throw rateLimited(resetSeconds);
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Checks `token` against ADMIN_TOKEN (compared as digests, in constant time): throws 403 when the
 * admin API is disabled, 401 when the token is wrong. The admin routes and the console's operator
 * sign-in both use it.
 */
export function assertAdminToken(config: AppContext['config'], token: string): void {
  if (!config.adminToken) throw forbidden('The admin API is disabled: set ADMIN_TOKEN to enable it');
  if (!timingSafeEqual(digest(token), digest(config.adminToken))) throw unauthorized('Invalid admin token');
}

/** The console's sessions, as the admin guard sees them (implemented in modules/console/). */
export interface SessionReader {
  /** The request's console session: undefined without the session cookie; throws on an ended or forged one. */
  read(request: FastifyRequest): Promise<{ role: 'account' | 'operator' } | undefined>;
}

/** The admin token from Bearer or, where the route declares `session`, an operator's console session. */
export function adminGuard(ctx: Pick<AppContext, 'config' | 'sessions'>): preValidationAsyncHookHandler {
  return async function authenticateAdmin(request: FastifyRequest) {
    if (!ctx.config.adminToken) throw forbidden('The admin API is disabled: set ADMIN_TOKEN to enable it');
    const sources = request.routeOptions.config.keySources ?? BEARER_ONLY;
    const authorization = sources.includes('bearer') ? request.headers.authorization : undefined;
    const token = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token) {
      // The console's operator pages use the same routes with the session cookie an admin-token sign-in set.
      const session = sources.includes('session') ? await ctx.sessions.read(request) : undefined;
      if (session?.role === 'operator') return;
      if (session) throw forbidden('This session is an account holder\'s; the admin API needs the operator');
      throw unauthorized('Missing admin token: send Authorization: Bearer <ADMIN_TOKEN>');
    }
    assertAdminToken(ctx.config, token);
  };
}
