import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preValidationAsyncHookHandler, preValidationHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';
import type { CachedKey } from '../lib/key-cache.ts';
import { addressAllowed, modelAllowed } from '../modules/accounts/key-policy.ts';
import type { RateDecision } from '../lib/rate-limiter.ts';
import { readSession } from '../modules/console/session-guard.ts';
import { forbidden, rateLimited, unauthorized } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: CachedKey;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * SPEC 5: Bearer everywhere; `/v1/messages` (and `/v1/models`, which the messages SDK lists through)
 * takes `x-api-key`; the native text routes, as the Gemini API does, `x-goog-api-key` and `?key=`.
 */
export function extractKey(request: FastifyRequest): string | undefined {
  const url = request.url;
  if (url.startsWith('/v1/messages') || url.startsWith('/v1/models')) {
    const header = request.headers['x-api-key'];
    if (typeof header === 'string' && header.trim() !== '') return header.trim();
  } else if (url.startsWith('/v1beta/') || url.startsWith('/gemini/')) {
    const header = request.headers['x-goog-api-key'];
    if (typeof header === 'string' && header.trim() !== '') return header.trim();
    const query = (request.query as { key?: unknown } | undefined)?.key;
    if (typeof query === 'string' && query !== '') return query;
  }
  const authorization = request.headers.authorization;
  if (!authorization) return undefined;
  return BEARER.exec(authorization)?.[1];
}

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
  /** The balance routes answer a deleted key with 200 `{success:false}` instead of 401 (SPEC 4.1). */
  allowDeleted?: boolean;
  /** The model the call uses, checked against the key's `models` before any hold (key-policy.ts). */
  model?: ModelOf;
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
 * Authenticates the key and applies its rate limit. A callback hook, not an async one: with the key
 * cached and the limit counted in memory (nearly every request of one process) it answers at once,
 * without the promises an async hook costs on every request; otherwise it waits for the database
 * or Redis.
 */
export function keyGuard(ctx: AppContext, options: KeyGuardOptions = {}): preValidationHookHandler {
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
    // done runs the rest of the request: outside the try, so nothing after this hook lands in its catch.
    let refused: Error | undefined;
    try {
      const token = extractKey(request);
      if (!token) {
        const where = request.url.startsWith('/v1/messages') ? 'x-api-key: <key>' : request.url.startsWith('/gemini/') ? 'x-goog-api-key: <key>' : 'Authorization: Bearer <key>';
        throw unauthorized(`Missing API key: send the header ${where}`);
      }
      const digest = keyDigest(token);
      const key = ctx.keyCache.cached(digest.hex);
      if (!key) {
        ctx.keyCache
          .lookup(digest.hex)
          .then((found) => {
            assertUsable(found, digest.bytes, options);
            if (found.policy) assertPolicy(found, request, options);
            request.apiKey = found;
            return limitLater(ctx, found, request, reply);
          })
          .then(() => done(), done);
        return;
      }
      assertUsable(key, digest.bytes, options);
      if (key.policy) assertPolicy(key, request, options);
      request.apiKey = key;
      const decision = ctx.rateLimiter.hitNow?.(key.id, limitOf(ctx, key));
      if (!decision) {
        limitLater(ctx, key, request, reply).then(() => done(), done);
        return;
      }
      applyRateLimit(decision, reply);
    } catch (err) {
      refused = err as Error;
    }
    done(refused);
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

const limitOf = (ctx: AppContext, key: CachedKey) => key.rate_limit_rpm ?? ctx.config.rateLimitRpm;

/** The rate limit when it must wait (counted in Redis, or after a key read from the database). */
async function limitLater(ctx: AppContext, key: CachedKey, request: FastifyRequest, reply: FastifyReply) {
  const limit = limitOf(ctx, key);
  let decision: RateDecision;
  try {
    decision = ctx.rateLimiter.hitNow?.(key.id, limit) ?? (await ctx.rateLimiter.hit(key.id, limit));
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

export function adminGuard(ctx: AppContext): preValidationAsyncHookHandler {
  return async function authenticateAdmin(request: FastifyRequest) {
    if (!ctx.config.adminToken) throw forbidden('The admin API is disabled: set ADMIN_TOKEN to enable it');
    const token = request.headers.authorization ? BEARER.exec(request.headers.authorization)?.[1] : undefined;
    if (!token) {
      // The console's operator pages use the same routes with the session cookie an admin-token sign-in set.
      const session = await readSession(ctx, request);
      if (session?.role === 'operator') return;
      if (session) throw forbidden('This session is an account holder\'s; the admin API needs the operator');
      throw unauthorized('Missing admin token: send Authorization: Bearer <ADMIN_TOKEN>');
    }
    assertAdminToken(ctx.config, token);
  };
}
