import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { Config } from '../config.ts';
import { forbidden, unauthorized } from '../core/errors.ts';
import type { KeySource } from './surface.ts';

// Reading credentials off a request, and the admin guard. The API key guard, which checks a key
// against its account's rules, is the accounts module's (modules/accounts/key-guard.ts).

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

/** The key the request sends from the sources its route declares; 401 asking for the first source when none. */
export function requiredKey(request: FastifyRequest): string {
  const sources = request.routeOptions.config.keySources ?? BEARER_ONLY;
  const token = extractKey(request, sources);
  if (!token) throw unauthorized(`Missing API key: send ${ASKED[sources[0] ?? 'bearer']}`);
  return token;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Checks `token` against ADMIN_TOKEN (compared as digests, in constant time): throws 403 when the
 * admin API is disabled, 401 when the token is wrong. The admin routes and the console's operator
 * sign-in both use it.
 */
export function assertAdminToken(config: Pick<Config, 'adminToken'>, token: string): void {
  if (!config.adminToken) throw forbidden('The admin API is disabled: set ADMIN_TOKEN to enable it');
  if (!timingSafeEqual(digest(token), digest(config.adminToken))) throw unauthorized('Invalid admin token');
}

/** The console's sessions, as the admin guard sees them (implemented in modules/console/). */
export interface SessionReader {
  /** The request's console session: undefined without the session cookie; throws on an ended or forged one. */
  read(request: FastifyRequest): Promise<{ role: 'account' | 'operator' } | undefined>;
}

/** The admin token from Bearer or, where the route declares `session`, an operator's console session. */
export function adminGuard(ctx: { config: Pick<Config, 'adminToken'>; sessions: SessionReader }): preValidationAsyncHookHandler {
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
