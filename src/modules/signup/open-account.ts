import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { badRequest } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { fromBalance } from '../../lib/money.ts';
import { insertUser } from '../accounts/accounts.repo.ts';
import { topUp } from '../billing/ledger.ts';
import { normalizeEmail } from '../console/console.service.ts';
import { insertNewCredentials } from './signup.repo.ts';

// An account that opens itself (sign-up, or a first sign-in through an identity provider): the user,
// its console credentials and SIGNUP_CREDIT's ledger row, in one transaction. The credentials' email
// is unique, so two sign-ups with one email race to one account: the second finds the row taken and
// its whole transaction (the user too) is undone.

type Ctx = Pick<AppContext, 'db' | 'config'>;

export const EMAIL_TAKEN = 'email: already used by another account';

/**
 * A password hash no password matches (verifyPassword knows only `scrypt$`): an account opened
 * without a password signs in through a reset or its identity provider.
 */
export const unusablePassword = () => `none$${randomBytes(16).toString('base64url')}`;
export const isUnusablePassword = (hash: string) => hash.startsWith('none$');

/** Opens the account and returns its user id; an email already in use is a 400. */
export async function openAccount(ctx: Ctx, input: { email: string; passwordHash: string | null; verified: boolean }): Promise<string> {
  const email = normalizeEmail(input.email);
  const id = newId('usr');
  const now = Date.now();
  const credit = fromBalance(ctx.config.signup.credit, ctx.config);
  await ctx.db.transaction().execute(async (trx) => {
    await insertUser(trx, { id, name: email, now });
    const row = { user_id: id, email, password_hash: input.passwordHash ?? unusablePassword(), created_at: now, updated_at: now, email_verified_at: input.verified ? now : null };
    if (!(await insertNewCredentials(trx, row))) throw badRequest(EMAIL_TAKEN);
    if (credit > 0) await topUp(trx, { userId: id, amount: credit, note: 'signup credit' });
  });
  return id;
}
