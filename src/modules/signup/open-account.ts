import type { AppContext } from '../../context.ts';
import { newId } from '../../lib/ids.ts';
import { fromBalance } from '../../lib/money.ts';
import { insertUser } from '../accounts/accounts.repo.ts';
import { topUp } from '../billing/ledger.ts';
import { upsertCredentials } from '../console/sessions.repo.ts';

type Ctx = Pick<AppContext, 'db' | 'config'>;

// Not an scrypt hash: no password ever matches it, so an account made without one signs in only
// through its identity provider.
const NO_PASSWORD = '!';

/** A self-made account: the user, its console sign-in and its SIGNUP_CREDIT, in one transaction. */
export async function openAccount(ctx: Ctx, input: { email: string; passwordHash: string | null; verified: boolean }): Promise<string> {
  const id = newId('usr');
  const email = input.email.trim().toLowerCase();
  const credit = fromBalance(ctx.config.signupCredit, ctx.config);
  const now = Date.now();
  await ctx.db.transaction().execute(async (trx) => {
    await insertUser(trx, { id, name: email, now });
    await upsertCredentials(trx, { user_id: id, email, password_hash: input.passwordHash ?? NO_PASSWORD, now });
    if (credit > 0) await topUp(trx, { userId: id, amount: credit, note: 'sign-up credit' });
  });
  return id;
}
