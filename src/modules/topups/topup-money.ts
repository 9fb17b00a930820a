import type { TopupsConfig } from '../../config.ts';
import { badRequest } from '../../core/errors.ts';
import { fromBalance, UNITS_PER_USD, type MoneyFormat } from '../../lib/money.ts';
import { isThreeDecimal, unitsPerMinor } from '../../lib/minor-units.ts';

// What a top-up costs. One unit of TOPUP_CURRENCY buys the balance one USD is (1,000,000 ledger
// units): one dollar of balance with BILLING_UNIT=usd, CREDITS_PER_USD credits with credits. Stripe
// takes amounts in the currency's smallest unit: cents, whole units for the currencies it lists as
// zero-decimal, thousandths for the three-decimal ones (whose amounts must end in 0). ISK is
// zero-decimal but still sent with two decimals, which must be 00. An amount must be a whole
// number of what Stripe accepts.

/** The ledger units of the smallest amount step Stripe charges in. */
const stepOf = (currency: string) => unitsPerMinor(currency) * (isThreeDecimal(currency) ? 10 : currency === 'isk' ? 100 : 1);

export interface TopupPrice {
  /** Ledger units credited once paid. */
  units: number;
  /** What Stripe charges, in the currency's smallest unit. */
  minor: number;
}

/** An amount in the balance unit, checked against TOPUP_MIN..TOPUP_MAX, and its price. */
export function priceOf(format: MoneyFormat, topups: TopupsConfig, amount: number): TopupPrice {
  if (!Number.isFinite(amount) || amount < topups.min || amount > topups.max) {
    throw badRequest(`amount must be from ${topups.min} to ${topups.max}`);
  }
  const units = fromBalance(amount, format);
  const step = stepOf(topups.currency);
  if (units % step !== 0) throw badRequest(`amount must be a whole number of ${step / UNITS_PER_USD} ${topups.currency.toUpperCase()}, the smallest amount Stripe charges`);
  return { units, minor: units / unitsPerMinor(topups.currency) };
}

/** An amount Stripe reports (disputed) in ledger units, never more than `cap`. */
export const unitsOf = (minor: number, currency: string, cap: number) => Math.min(Math.max(0, Math.round(minor)) * unitsPerMinor(currency), cap);

/**
 * The share of a top-up that `part` of its charge is, in ledger units (rounded down; all of it when
 * `part` is the whole charge). A share, not a conversion: the charge may be in the customer's own
 * currency when Stripe converted the price for them.
 */
export function shareOf(units: number, part: number, whole: number): number {
  if (whole <= 0 || part >= whole) return units;
  if (part <= 0) return 0;
  return Number((BigInt(units) * BigInt(Math.round(part))) / BigInt(Math.round(whole)));
}
