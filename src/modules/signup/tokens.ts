import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Kysely, Transaction } from 'kysely';
import type { Database, SignupTokensTable } from '../../db/types.ts';
import { deleteExpiredTokens, insertToken, takeToken } from './signup.repo.ts';

// The tokens in mailed links: 256 random bits, of which only the SHA-256 is stored, so the table
// opens no account. Each is taken once (a conditional UPDATE) and only before it expires.

type Ctx = Pick<AppContext, 'db' | 'config'>;
type Purpose = SignupTokensTable['purpose'];

const hashOf = (token: string) => createHash('sha256').update(token.trim()).digest('hex');

/** A new token for the account; written through `db` when given (a transaction it must be part of). */
export async function issueToken(ctx: Ctx, userId: string, purpose: Purpose, db: Kysely<Database> | Transaction<Database> = ctx.db): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = Date.now();
  const ttl = purpose === 'verify' ? ctx.config.signup.verifyTtlMs : ctx.config.signup.resetTtlMs;
  // Issuing is rare: a good moment to drop the tokens that ran out, so the table stays small.
  await deleteExpiredTokens(db, now);
  await insertToken(db, { token_hash: hashOf(token), purpose, user_id: userId, created_at: now, expires_at: now + ttl, used_at: null });
  return token;
}

/** The account the token was issued to; undefined when it is unknown, used or expired. */
export const redeemToken = (ctx: Ctx, token: string, purpose: Purpose) => takeToken(ctx.db, hashOf(token), purpose, Date.now());

/** A console page's address; a token rides in the fragment, which no server or Referer sees. */
export function consoleLink(ctx: Pick<AppContext, 'config'>, page: 'verify' | 'reset' | 'signin' | 'forgot' | 'signup', query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${ctx.config.publicBaseUrl}/console/#/${page === 'signin' ? '' : page}${search ? `?${search}` : ''}`;
}
