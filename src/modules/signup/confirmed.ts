import type { AppContext } from '../../context.ts';
import { forbidden } from '../../core/errors.ts';
import { isVerified } from './signup.repo.ts';

/** An account that opened itself makes keys only once its email is confirmed. */
export async function assertConfirmed(ctx: Pick<AppContext, 'db'>, userId: string): Promise<void> {
  if (!(await isVerified(ctx.db, userId))) throw forbidden('Confirm your email first: follow the link in the mail we sent you');
}
