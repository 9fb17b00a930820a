import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { ConsoleSessionsTable, Database } from '../../db/types.ts';
import type { SessionReader } from '../../http/auth.ts';
import { forbidden, unauthorized } from '../../core/errors.ts';
import { findSession } from './sessions.repo.ts';

// The console authenticates with an httpOnly, SameSite=Strict cookie. A cookie rides along on any
// request the browser makes, so every state-changing request must also echo the session's CSRF
// token in a header, which another site's page can neither read nor set.

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: ConsoleSessionsTable;
  }
}

// The database and ADMIN_TOKEN, not the app context: context.ts makes the admin guard's session reader from here.
type DbOnly = { db: Kysely<Database>; config: Pick<Config, 'adminToken'> };

export const SESSION_COOKIE = 'gw_console';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * An operator's session is stored under its token keyed with ADMIN_TOKEN: setting a new ADMIN_TOKEN
 * (say, after the old one leaked) ends every operator session the old one opened.
 */
export const operatorTokenHash = (token: string, adminToken: string) => createHmac('sha256', adminToken).update(token).digest('hex');

async function storedSession(ctx: DbOnly, token: string, now: number): Promise<ConsoleSessionsTable | undefined> {
  const session = await findSession(ctx.db, tokenHash(token), now);
  // An operator's row under the plain hash was opened before sessions were keyed with ADMIN_TOKEN.
  if (session) return session.role === 'operator' ? undefined : session;
  if (!ctx.config.adminToken) return undefined;
  const operator = await findSession(ctx.db, operatorTokenHash(token, ctx.config.adminToken), now);
  return operator?.role === 'operator' ? operator : undefined;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export function sessionCookie(ctx: { config: Pick<Config, 'publicBaseUrl'> }, token: string, maxAgeSeconds: number): string {
  const secure = ctx.config.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The request's console session, or undefined when it carries no cookie. Throws on a bad one. */
export async function readSession(ctx: DbOnly, request: FastifyRequest): Promise<ConsoleSessionsTable | undefined> {
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (!token) return undefined;
  const session = await storedSession(ctx, token, Date.now());
  if (!session) throw unauthorized('Your console session has ended: sign in again');
  if (!SAFE_METHODS.has(request.method)) {
    const sent = request.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !sameText(sent, session.csrf_token)) throw forbidden(`Missing or wrong ${CSRF_HEADER} header`);
  }
  return session;
}

/** The sessions as http/auth.ts's admin guard reads them (an operator's session opens the admin API). */
export const consoleSessions = (ctx: DbOnly): SessionReader => ({ read: (request) => readSession(ctx, request) });

/** preValidation for the account holder's console routes. */
export function accountSessionGuard(ctx: DbOnly) {
  return async function requireAccountSession(request: FastifyRequest, _reply: FastifyReply) {
    const session = await readSession(ctx, request);
    if (!session) throw unauthorized('Sign in to the console first');
    if (session.role !== 'account' || !session.user_id) throw forbidden('This page is for account holders; operators use the admin pages');
    request.consoleSession = session;
  };
}
