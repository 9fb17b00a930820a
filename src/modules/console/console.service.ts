import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { assertAdminToken } from '../../http/auth.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../../core/errors.ts';
import { getUser } from '../accounts/accounts.repo.ts';
import { decoyHash, hashPassword, verifyPassword } from './password.ts';
import { operatorTokenHash, tokenHash } from './session-guard.ts';
import { beginSignInAttempt } from './sign-in-limits.ts';
import { deleteExpiredSessions, deleteSession, deleteUserSessions, findCredentialsByEmail, insertSession, upsertCredentials } from './sessions.repo.ts';

type Ctx = Pick<AppContext, 'db' | 'config' | 'rateLimiter'>;

/** One message for an unknown email and a wrong password: the page must not reveal which emails exist. */
export const BAD_SIGN_IN = 'Email or password is incorrect';
/** After the password checked out: the account opened itself and its email is not confirmed yet. */
export const UNCONFIRMED = 'Confirm your email first: follow the link in the mail we sent you (sign up again with the same email for a new one)';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export interface NewSession {
  token: string;
  csrfToken: string;
  maxAgeSeconds: number;
  role: 'account' | 'operator';
  userId: string | null;
}

export async function openSession(ctx: Ctx, role: 'account' | 'operator', userId: string | null): Promise<NewSession> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const maxAgeSeconds = ctx.config.console.sessionHours * 3600;
  const now = Date.now();
  // Sign-ins are rare: a good moment to drop sessions that ran out, so the table stays small.
  await deleteExpiredSessions(ctx.db, now);
  const hash = role === 'operator' && ctx.config.adminToken ? operatorTokenHash(token, ctx.config.adminToken) : tokenHash(token);
  await insertSession(ctx.db, { token_hash: hash, role, user_id: userId, csrf_token: csrfToken, created_at: now, expires_at: now + maxAgeSeconds * 1000 });
  return { token, csrfToken, maxAgeSeconds, role, userId };
}

export async function signInAccount(ctx: Ctx, input: { email: string; password: string }, clientAddress: string): Promise<NewSession> {
  const email = normalizeEmail(input.email);
  const attempt = await beginSignInAttempt(ctx, clientAddress, email);
  const credentials = await findCredentialsByEmail(ctx.db, email);
  // An account opened without a password keeps one no password matches: checked as long as a real one.
  const stored = credentials?.password_hash.startsWith('scrypt$') ? credentials.password_hash : await decoyHash();
  const matches = await verifyPassword(input.password, stored);
  if (!credentials || !matches || stored !== credentials.password_hash) throw unauthorized(BAD_SIGN_IN);
  const user = await getUser(ctx.db, credentials.user_id);
  if (!user || user.status !== 'active') throw unauthorized(BAD_SIGN_IN);
  await attempt.succeeded();
  if (credentials.email_verified_at === null) throw forbidden(UNCONFIRMED);
  return openSession(ctx, 'account', user.id);
}

export async function signInOperator(ctx: Ctx, adminToken: string, clientAddress: string): Promise<NewSession> {
  if (!ctx.config.adminToken) throw forbidden('The admin API is disabled: set ADMIN_TOKEN to enable it');
  const attempt = await beginSignInAttempt(ctx, clientAddress);
  assertAdminToken(ctx.config, adminToken);
  await attempt.succeeded();
  return openSession(ctx, 'operator', null);
}

export async function signOut(ctx: Ctx, token: string) {
  await deleteSession(ctx.db, tokenHash(token));
  if (ctx.config.adminToken) await deleteSession(ctx.db, operatorTokenHash(token, ctx.config.adminToken));
}

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 10;

/** The operator gives an account its console sign-in; earlier sessions of that account end. */
export async function setCredentials(ctx: Ctx, userId: string, input: { email: string; password: string }) {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw badRequest('email: not an email address');
  if (input.password.length < MIN_PASSWORD_LENGTH) throw badRequest(`password: at least ${MIN_PASSWORD_LENGTH} characters`);
  if (!(await getUser(ctx.db, userId))) throw notFound(`No user ${userId}`);
  const passwordHash = await hashPassword(input.password);
  const takenByOther = async () => {
    const existing = await findCredentialsByEmail(ctx.db, email);
    return existing !== undefined && existing.user_id !== userId;
  };
  const taken = badRequest('email: already used by another account');
  if (await takenByOther()) throw taken;
  try {
    await upsertCredentials(ctx.db, { user_id: userId, email, password_hash: passwordHash, now: Date.now() });
  } catch (err) {
    // A sign-up took the email between the check and the write: its unique index refused ours.
    if (await takenByOther()) throw taken;
    throw err;
  }
  await deleteUserSessions(ctx.db, userId);
  return { user_id: userId, email };
}
