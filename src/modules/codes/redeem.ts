import type { AppContext } from '../../context.ts';
import type { RedeemCode } from '../../db/types.ts';
import { forbidden, notFound, rateLimited } from '../../core/errors.ts';
import { toBalance, toCredits } from '../../lib/money.ts';
import { topUp } from '../billing/ledger.ts';
import { credited } from '../accounts/amounts.ts';
import { codeHash } from './code-secret.ts';
import { findCodeByHash, getCode, hasRedeemed, insertRedemption, takeUse } from './codes.repo.ts';

// An account redeems a code: in one transaction its redemption row (the primary key (code, account)
// lets a code credit an account once), one more use of the code (a conditional UPDATE: never past
// `uses`, never once revoked or expired) and the credit with its ledger row. Parallel redemptions on
// any number of processes wait on those rows, so a code credits at most `uses` accounts.

type Ctx = Pick<AppContext, 'db' | 'config' | 'rateLimiter'>;

/** Refused redemptions an account may make per minute: guessing codes meets a 429 long before one is found. */
export const REDEEM_REFUSALS_PER_MINUTE = 10;

const alreadyRedeemed = () => forbidden('This account has already redeemed this code');

/** Why a live-looking code cannot be taken now, or undefined when it can. */
function refusal(code: RedeemCode, now: number) {
  if (code.revoked_at !== null) return forbidden('This code has been revoked');
  if (code.expires_at !== null && Number(code.expires_at) <= now) return forbidden('This code has expired');
  if (Number(code.used) >= Number(code.uses)) return forbidden('This code has been used up');
  return undefined;
}

async function credit(ctx: Ctx, userId: string, plain: string) {
  const code = await findCodeByHash(ctx.db, codeHash(plain));
  if (!code) throw notFound('No such code');
  // Refusals that need no transaction; the account's own earlier redemption first, as the clearest.
  if (await hasRedeemed(ctx.db, code.id, userId)) throw alreadyRedeemed();
  const now = Date.now();
  const early = refusal(code, now);
  if (early) throw early;
  // Written first, then the code's row, then the account's: every redemption takes its locks in one order.
  // A code that would take the balance above its maximum is refused whole: no use taken, no row.
  await credited(ctx, 'code', () => ctx.db.transaction().execute(async (trx) => {
    if (!(await insertRedemption(trx, code.id, userId, now))) throw alreadyRedeemed();
    if (!(await takeUse(trx, code.id, now))) throw refusal((await getCode(trx, code.id))!, now) ?? forbidden('This code cannot be redeemed');
    await topUp(trx, { userId, amount: Number(code.amount), ref: code.id, note: `redemption code ${code.id}` });
  }));
  return {
    code_id: code.id,
    amount: toBalance(Number(code.amount), ctx.config),
    amount_credits: toCredits(Number(code.amount), ctx.config),
  };
}

/**
 * Credits the account with the code's amount. Each attempt is counted before the code is looked
 * at, so parallel guesses cannot outrun the limit; a redemption that succeeds is taken back, so only
 * refusals use up the account's minute.
 */
export async function redeem(ctx: Ctx, userId: string, plain: string) {
  const counter = `redeem:${userId}`;
  const decision = await ctx.rateLimiter.hit(counter, REDEEM_REFUSALS_PER_MINUTE);
  if (!decision.allowed) {
    await ctx.rateLimiter.release(counter);
    throw rateLimited(Math.max(1, Math.ceil(decision.resetMs / 1000)));
  }
  const done = await credit(ctx, userId, plain);
  await ctx.rateLimiter.release(counter);
  return done;
}
