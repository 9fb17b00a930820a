import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Invite } from '../../db/types.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { EMAIL, normalizeEmail } from '../console/console.service.ts';
import { findInviteByHash, giveBackInvite, insertInvite, listInvites, revokeInvite, setInviteUser, takeInvite } from './signup.repo.ts';
import { consoleLink } from './tokens.ts';
import { codeHash } from '../codes/code-secret.ts';

// The operator's invites for SIGNUP=invite: a code (128 random bits, only its SHA-256 kept) that opens
// one account, bound to an email when the operator names one. The plain code exists only in the
// answer that made it.

type Ctx = Pick<AppContext, 'db' | 'config'>;

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(Number(ms) / 1000));

function status(invite: Invite, now: number): 'active' | 'used' | 'revoked' | 'expired' {
  if (invite.used_at !== null) return 'used';
  if (invite.revoked_at !== null) return 'revoked';
  if (invite.expires_at !== null && Number(invite.expires_at) <= now) return 'expired';
  return 'active';
}

export function inviteView(invite: Invite, now = Date.now()) {
  return {
    id: invite.id,
    email: invite.email,
    status: status(invite, now),
    created_at: seconds(invite.created_at)!,
    expires_at: seconds(invite.expires_at),
    used_at: seconds(invite.used_at),
    used_by: invite.used_by,
    revoked_at: seconds(invite.revoked_at),
  };
}

export async function createInvite(ctx: Ctx, input: { email?: string; expires_at?: number | null }) {
  const email = input.email === undefined || input.email.trim() === '' ? null : normalizeEmail(input.email);
  if (email !== null && !EMAIL.test(email)) throw badRequest('email: not an email address');
  const now = Date.now();
  if (input.expires_at != null && input.expires_at * 1000 <= now) throw badRequest('expires_at must be in the future');
  const expiresAt = input.expires_at === null ? null : input.expires_at === undefined ? now + ctx.config.signup.inviteTtlMs : input.expires_at * 1000;
  const code = `inv-${randomBytes(16).toString('hex')}`;
  const row: Invite = { id: newId('inv'), code_hash: codeHash(code), email, created_at: now, expires_at: expiresAt, used_at: null, used_by: null, revoked_at: null };
  await insertInvite(ctx.db, row);
  return { ...inviteView(row, now), code, link: consoleLink(ctx, 'signup', { invite: code }) };
}

export async function findInvites(ctx: Ctx, limit = 1000) {
  const now = Date.now();
  return (await listInvites(ctx.db, Math.min(Math.max(limit, 1), 1000))).map((invite) => inviteView(invite, now));
}

export async function revoke(ctx: Ctx, id: string) {
  const invite = await revokeInvite(ctx.db, id, Date.now());
  if (!invite) throw notFound(`No invite ${id}`);
  return inviteView(invite);
}

const REFUSED = { used: 'This invite has already been used', revoked: 'This invite has been withdrawn', expired: 'This invite has expired' } as const;

/** The live invite a sign-up with `email` may use; 403 naming why not. */
export async function usableInvite(ctx: Ctx, code: string | undefined, email: string): Promise<Invite> {
  if (!code || !code.trim()) throw forbidden('Sign-up is by invitation: enter the invite code you were sent');
  const invite = await findInviteByHash(ctx.db, codeHash(code));
  if (!invite) throw forbidden('This invite code is not valid');
  const why = status(invite, Date.now());
  if (why !== 'active') throw forbidden(REFUSED[why]);
  if (invite.email !== null && invite.email !== email) throw forbidden('This invite is for another email address');
  return invite;
}

/**
 * Opens an account with an invite (a provider sign-in under SIGNUP=invite): the invite is taken by
 * one conditional UPDATE before `open` runs, given back if no account opened, then names its account.
 * A code that cannot be used is the 403 usableInvite names.
 */
export async function openWithInvite(ctx: Ctx, code: string | undefined, email: string, open: () => Promise<string>): Promise<string> {
  const invite = await usableInvite(ctx, code, email);
  if (!(await takeInvite(ctx.db, invite.id, Date.now()))) throw forbidden(REFUSED.used);
  let userId: string;
  try {
    userId = await open();
  } catch (err) {
    await giveBackInvite(ctx.db, invite.id);
    throw err;
  }
  await setInviteUser(ctx.db, invite.id, userId);
  return userId;
}
