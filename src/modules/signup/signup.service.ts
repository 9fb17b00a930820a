import type { AppContext } from '../../context.ts';
import { ApiError, badRequest, forbidden } from '../../core/errors.ts';
import { getUser } from '../accounts/accounts.repo.ts';
import { MIN_PASSWORD_LENGTH, EMAIL, normalizeEmail } from '../console/console.service.ts';
import { hashPassword } from '../console/password.ts';
import { deleteUserSessions, findCredentialsByEmail } from '../console/sessions.repo.ts';
import { usableInvite } from './invites.service.ts';
import { canMail, sendInBackground } from './mailer.ts';
import { accountExistsMail, resetMail, verifyMail } from './mails.ts';
import { EMAIL_TAKEN, isUnusablePassword, openAccount, unusablePassword } from './open-account.ts';
import { countAttempt } from './signup-limits.ts';
import { giveBackInvite, markVerified, passwordHashOf, setInviteUser, setPasswordHash, setUnconfirmedPassword, takeInvite, useUpTokens } from './signup.repo.ts';
import { issueToken, redeemToken } from './tokens.ts';

// Customers open their own accounts (SIGNUP=open, or invite with an operator's invite), confirm the
// email through a mailed link, and set a new password through another. The answers to sign-up and
// to a reset request are the same whether or not the email has an account: what differs goes by mail.

type Ctx = Pick<AppContext, 'db' | 'config' | 'rateLimiter' | 'logger'>;

export const SIGNUP_ACCEPTED = 'Check your mail: we sent a link to confirm the address.';
export const RESET_ACCEPTED = 'If an account has this address, we mailed it a link to set a new password.';
const BAD_LINK = 'This link is not valid any more (used, expired or mistyped): ask for a new one';

function checkPassword(password: string) {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(`password: at least ${MIN_PASSWORD_LENGTH} characters`);
}

export function signupSettings(ctx: Pick<AppContext, 'config'>) {
  return { mode: ctx.config.signup.mode, password_reset: canMail(ctx) };
}

export async function signUp(ctx: Ctx, input: { email: string; password: string; invite?: string }, clientAddress: string) {
  const mode = ctx.config.signup.mode;
  if (mode === 'closed') throw forbidden('Sign-up is closed here: ask the operator for an account');
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw badRequest('email: not an email address');
  checkPassword(input.password);
  await countAttempt(ctx, clientAddress, email);
  const invite = mode === 'invite' ? await usableInvite(ctx, input.invite, email) : undefined;
  // Hashed whether or not the account exists, so both answers take the same time.
  const passwordHash = await hashPassword(input.password);
  const existing = await findCredentialsByEmail(ctx.db, email);
  if (existing) {
    await mailExisting(ctx, existing);
    return { message: SIGNUP_ACCEPTED };
  }
  if (invite && !(await takeInvite(ctx.db, invite.id, Date.now()))) throw forbidden('This invite has already been used');
  let userId: string;
  try {
    userId = await openAccount(ctx, { email, passwordHash, verified: false });
  } catch (err) {
    // The invite opened nothing: it is free again.
    if (invite) await giveBackInvite(ctx.db, invite.id);
    if (!(err instanceof ApiError && err.message === EMAIL_TAKEN)) throw err;
    // A parallel sign-up opened the account first: this one is answered as for an existing email.
    const winner = await findCredentialsByEmail(ctx.db, email);
    if (winner) await mailExisting(ctx, winner);
    return { message: SIGNUP_ACCEPTED };
  }
  if (invite) await setInviteUser(ctx.db, invite.id, userId);
  sendInBackground(ctx, verifyMail(ctx, email, await issueToken(ctx, userId, 'verify')));
  return { message: SIGNUP_ACCEPTED };
}

/**
 * A confirmed account is told it exists. One never confirmed is contested: two sign-ups named its
 * address, and nobody has shown yet that they read its mail, so neither password may stand (the
 * first could be someone else's, signing up with this address to take the account over later; the
 * last could be too). The password is dropped, the links mailed before stop working, and the one
 * link mailed now confirms the address and lets whoever opens it choose the password (verifyEmail).
 */
async function mailExisting(ctx: Ctx, credentials: { user_id: string; email: string; email_verified_at: number | null }) {
  const now = Date.now();
  // The new link is written in the same transaction: a sign-up racing this one waits for the
  // credentials' row, then ends this link too, so one link is left.
  const link = credentials.email_verified_at === null && (await ctx.db.transaction().execute(async (trx) => {
    if (!(await setUnconfirmedPassword(trx, credentials.user_id, unusablePassword(), now))) return undefined;
    await useUpTokens(trx, credentials.user_id, 'verify', now);
    return issueToken(ctx, credentials.user_id, 'verify', trx);
  }));
  if (link) sendInBackground(ctx, verifyMail(ctx, credentials.email, link));
  else sendInBackground(ctx, accountExistsMail(ctx, credentials.email));
}

/**
 * Confirms the address. A contested account (see mailExisting) has no password yet: the answer
 * carries a password link's token, for the console to ask the one who read the mail for it.
 */
export async function verifyEmail(ctx: Ctx, token: string, clientAddress: string): Promise<{ verified: true; password_token?: string }> {
  await countAttempt(ctx, clientAddress);
  const userId = await redeemToken(ctx, token, 'verify');
  if (!userId) throw badRequest(BAD_LINK);
  await markVerified(ctx.db, userId, Date.now());
  const passwordHash = await passwordHashOf(ctx.db, userId);
  if (passwordHash !== undefined && isUnusablePassword(passwordHash)) return { verified: true, password_token: await issueToken(ctx, userId, 'reset') };
  return { verified: true };
}

export async function requestReset(ctx: Ctx, input: { email: string }, clientAddress: string) {
  if (!canMail(ctx)) throw forbidden('Password reset by mail is not set up here: ask the operator to set a new password');
  const email = normalizeEmail(input.email);
  await countAttempt(ctx, clientAddress, email);
  const credentials = await findCredentialsByEmail(ctx.db, email);
  const user = credentials && (await getUser(ctx.db, credentials.user_id));
  if (credentials && user?.status === 'active') sendInBackground(ctx, resetMail(ctx, email, await issueToken(ctx, credentials.user_id, 'reset')));
  return { message: RESET_ACCEPTED };
}

/**
 * Sets the new password: the old one stops working, the account's sessions end and its other reset
 * links die. The link came by mail, so it also confirms the email.
 */
export async function confirmReset(ctx: Ctx, input: { token: string; password: string }, clientAddress: string) {
  await countAttempt(ctx, clientAddress);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const userId = await redeemToken(ctx, input.token, 'reset');
  if (!userId) throw badRequest(BAD_LINK);
  const now = Date.now();
  await ctx.db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, userId, passwordHash, now);
    await markVerified(trx, userId, now);
    await useUpTokens(trx, userId, 'reset', now);
    await deleteUserSessions(trx, userId);
  });
  return { reset: true };
}
