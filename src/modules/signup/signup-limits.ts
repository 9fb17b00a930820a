import type { AppContext } from '../../context.ts';
import { rateLimited } from '../../core/errors.ts';

// Sign-up, verification and reset requests per minute (N = SIGNUP_RPM), counted whatever their
// outcome: N per client address over the four routes, and N per email for the two that mail, so no
// one can fill a stranger's mailbox or try tokens quickly. The limiter is the process's (Redis when
// set), so every process shares the counts.

type Ctx = Pick<AppContext, 'config' | 'rateLimiter'>;

async function count(ctx: Ctx, key: string): Promise<void> {
  const decision = await ctx.rateLimiter.hit(`signup:${key}`, ctx.config.signup.rpm);
  if (!decision.allowed) throw rateLimited(Math.max(1, Math.ceil(decision.resetMs / 1000)));
}

/** Throws 429 when the client address, or the email when given, has had its N this minute. */
export async function countAttempt(ctx: Ctx, clientAddress: string, email?: string): Promise<void> {
  await count(ctx, `ip:${clientAddress}`);
  if (email !== undefined) await count(ctx, `email:${email}`);
}
