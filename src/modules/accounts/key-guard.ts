import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { AppContext } from '../../context.ts';
import { forbidden, rateLimited, unauthorized } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import { requiredKey } from '../../http/auth.ts';
import type { RateDecision } from '../../lib/rate-limiter.ts';
import { addressAllowed, modelAllowed } from './key-policy.ts';

// The API key guard: the key a request sends (http/auth.ts reads it), found through the key cache,
// checked against its status and policy, then counted against its rate limit.

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: CachedKey;
  }
}

type GuardContext = Pick<AppContext, 'keyCache' | 'rateLimiter' | 'config'>;

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

/**
 * Authenticates the key (from the sources the route declares) and applies its rate limit. A hook
 * with a callback, not an async one: a cached key whose limit is counted in memory is let through
 * in the same turn (an async hook cost every call a promise and turns of the microtask queue).
 */
export function keyGuard(ctx: GuardContext, options: KeyGuardOptions = {}): preValidationHookHandler {
  return function authenticate(request, reply, done) {
    const fail = (err: unknown) => done(err as FastifyError);
    let token: string;
    let digest: { bytes: Buffer; hex: string };
    let key: CachedKey | undefined;
    let later: Promise<void> | undefined;
    try {
      token = requiredKey(request);
      digest = keyDigest(token);
      key = ctx.keyCache.cached(digest.hex);
      if (key) later = admit(ctx, options, request, reply, token, digest.bytes, key);
    } catch (err) {
      return fail(err);
    }
    // done() outside the try: the rest of the request may run inside it.
    if (key && !later) return done();
    (later ?? ctx.keyCache.lookup(digest.hex).then((found) => admit(ctx, options, request, reply, token, digest.bytes, found))).then(() => done(), fail);
  };
}

/** A found key let in, or refused; a promise only when the rate limit is counted elsewhere (Redis). */
function admit(ctx: GuardContext, options: KeyGuardOptions, request: FastifyRequest, reply: FastifyReply, token: string, digest: Buffer, key: CachedKey | undefined): Promise<void> | undefined {
  assertUsable(key, digest, options);
  // Known before its policy is checked: a refusal is logged under the key's account (modules/calls/).
  request.apiKey = key;
  // Body capture for the call log (modules/calls/call-bodies.ts), off unless the key asks for it.
  if (key.log_bodies) request.callEntry?.keepBodies(request.body, reply.raw, token, ctx.config.callBodyMaxBytes);
  if (key.policy) assertPolicy(key, request, options);
  const budget = budgetOf(ctx, key, options.read === true);
  // Counted in memory (one process without Redis) the limit needs no wait.
  const decision = ctx.rateLimiter.hitNow?.(budget.counter, budget.limit);
  if (!decision) return limitLater(ctx, budget, request, reply);
  applyRateLimit(decision, reply);
  return undefined;
}

function assertUsable(key: CachedKey | undefined, digest: Buffer, options: KeyGuardOptions): asserts key is CachedKey {
  if (!key || !timingSafeEqual(key.hashBytes, digest)) throw unauthorized('Invalid API key');
  if (key.accountDisabled) throw unauthorized("This API key's account is disabled: ask the operator");
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
function budgetOf(ctx: GuardContext, key: CachedKey, read: boolean): Budget {
  const spend = key.rate_limit_rpm ?? ctx.config.rateLimitRpm;
  return read
    ? { counter: `read:${key.id}`, limit: Math.max(ctx.config.readRateLimitRpm, spend) }
    : { counter: key.id, limit: spend };
}

/** The rate limit when it must wait (counted in Redis). */
async function limitLater(ctx: GuardContext, { counter, limit }: Budget, request: FastifyRequest, reply: FastifyReply) {
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
