import type { AppContext } from '../../context.ts';
import { badRequest } from '../../core/errors.ts';
import { fromBalance, MAX_BALANCE_UNITS, toBalance } from '../../lib/money.ts';
import { AboveMaximum } from '../billing/ledger.ts';

// Amounts as operators and account holders send them, in the configured balance unit, and the one
// maximum every balance and quota keeps to (MAX_BALANCE_UNITS): an amount above it is refused as
// sent, and a credit that would take a balance or quota above it is refused by the ledger's UPDATE.

type Ctx = Pick<AppContext, 'config'>;

/** The balance maximum (lib/money.ts) in the configured balance unit, as messages name it. */
export const maxBalance = (ctx: Ctx) => toBalance(MAX_BALANCE_UNITS, ctx.config);

/** 400 naming `field` and the maximum: what a credit or quota change above it gets. */
export const aboveMaximum = (ctx: Ctx, field: string, what: 'balance' | 'quota') =>
  badRequest(`${field}: the ${what} would go above its maximum of ${maxBalance(ctx)}`);

/** Amounts arrive in the configured balance unit; none may exceed what a balance or quota may hold. */
export function units(ctx: Ctx, field: string, amount: number): number {
  const value = fromBalance(amount, ctx.config);
  if (!(value <= MAX_BALANCE_UNITS)) throw badRequest(`${field} must be at most ${maxBalance(ctx)}, the most a balance or quota may hold`);
  if (!Number.isSafeInteger(value) || value < 0) throw badRequest(`${field} must be a non-negative amount`);
  return value;
}

/** Runs a credit of `field`; a balance or quota it would take above the maximum is a 400. */
export async function credited<T>(ctx: Ctx, field: string, credit: () => Promise<T>): Promise<T> {
  try {
    return await credit();
  } catch (err) {
    if (err instanceof AboveMaximum) throw aboveMaximum(ctx, field, err.payer === 'account' ? 'balance' : 'quota');
    throw err;
  }
}
