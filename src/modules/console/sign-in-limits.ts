import type { AppContext } from '../../context.ts';
import { rateLimited } from '../../core/errors.ts';
import type { RateDecision } from '../../lib/rate-limiter.ts';

// Sign-in limits count wrong passwords only, in one-minute windows (N = CONSOLE_SIGNIN_RPM):
// - per client address: N failures, whatever the emails;
// - per (address, email): min(5, N) failures;
// - per email: once it has had N failures this minute, an address that has itself failed for it
//   waits for the next minute, while an address that has not is still checked.
// A limit per email alone would let anyone lock an owner out by guessing from many addresses; the
// last rule keeps the owner's right password (from an address that has not failed) working and still
// holds an attacker who rotates addresses to one guess per address and minute at that email.

type Ctx = Pick<AppContext, 'config' | 'rateLimiter'>;

const PAIR_LIMIT = 5;

export interface SignInAttempt {
  /** The password was right: the attempt is taken back, so signing in never uses up a limit. */
  succeeded(): Promise<void>;
}

/**
 * Counts the attempt before the password is checked, so parallel guesses cannot outrun the limits, and
 * throws 429 (taking the attempt back: only checked passwords count) when one is reached.
 * `email` is absent for the operator's sign-in, which has no email.
 */
export async function beginSignInAttempt(ctx: Ctx, clientAddress: string, email?: string): Promise<SignInAttempt> {
  const rpm = ctx.config.console.signInRpm;
  const counted: string[] = [];
  const takeBack = async () => {
    await Promise.all(counted.map((key) => ctx.rateLimiter.release(key)));
  };
  const count = async (subject: string, limit: number) => {
    const key = `console-signin:${subject}`;
    const decision = await ctx.rateLimiter.hit(key, limit);
    counted.push(key);
    return decision;
  };
  const refuse = async (decision: RateDecision): Promise<never> => {
    await takeBack();
    throw rateLimited(Math.max(1, Math.ceil(decision.resetMs / 1000)));
  };

  const byAddress = await count(`ip:${clientAddress}`, rpm);
  if (!byAddress.allowed) await refuse(byAddress);
  if (email !== undefined) {
    // JSON, not a separator: IPv6 addresses and emails both may hold ':'.
    const byPair = await count(`ip-email:${JSON.stringify([clientAddress, email])}`, Math.min(PAIR_LIMIT, rpm));
    if (!byPair.allowed) await refuse(byPair);
    const byEmail = await count(`email:${email}`, rpm);
    // byPair was allowed, so limit - remaining is this address's tries at this email, this one included.
    const failedHereBefore = byPair.limit - byPair.remaining > 1;
    if (!byEmail.allowed && failedHereBefore) await refuse(byEmail);
  }
  return { succeeded: takeBack };
}
