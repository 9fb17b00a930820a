// Money is integer ledger units: 1 USD = 1,000,000 units. Floats exist only at the JSON edge.
export const UNITS_PER_USD = 1_000_000;

/**
 * The most a balance or a key's quota may hold: USD 1,000,000,000, 1e15 units. Balances and ledger
 * sums are read into doubles, which hold integers exactly only up to 2^53 (about 9.007e15): below
 * this maximum every credit and its ledger row stay exact, and what a refund can add on top (at most
 * what is held, itself paid out of a balance under the maximum) still leaves a wide margin.
 */
export const MAX_BALANCE_USD = 1_000_000_000;
export const MAX_BALANCE_UNITS = MAX_BALANCE_USD * UNITS_PER_USD;
/** How the maximum reads in the API's descriptions. */
export const MAX_BALANCE_NOTE = `a balance or quota holds at most ${MAX_BALANCE_USD} USD (with BILLING_UNIT=credits, that times CREDITS_PER_USD)`;

/** BILLING_UNIT: the unit balances, costs and quotas are shown and typed in. */
export type BillingUnit = 'usd' | 'credits';

export interface MoneyFormat {
  billingUnit: BillingUnit;
  creditsPerUsd: number;
}

/** Units -> the configured balance unit (USD or credits), as the float the API shows. */
export function toBalance(units: number, format: MoneyFormat): number {
  if (format.billingUnit === 'usd') return units / UNITS_PER_USD;
  // Credits are not the rounded dollars times the rate (USD 2.01 would read 2009.9999999999998
  // credits): the exact product is divided once, so the one rounding gives the double nearest the
  // amount, which reads as the amount does (2010, 2032.053).
  const scaled = units * format.creditsPerUsd;
  if (Number.isSafeInteger(scaled)) return scaled / UNITS_PER_USD;
  // Past 2^53 (billions of credits) the product is not exact: whole dollars and the rest apart.
  const dollars = Math.trunc(units / UNITS_PER_USD);
  const rest = units - dollars * UNITS_PER_USD;
  return dollars * format.creditsPerUsd + (rest * format.creditsPerUsd) / UNITS_PER_USD;
}

/** Units -> whole credits, rounded down so a caller never sees credits they cannot spend. */
export function toCredits(units: number, format: MoneyFormat): number {
  return Math.floor((units * format.creditsPerUsd) / UNITS_PER_USD);
}

/** An amount in the configured balance unit (as operators type it) -> integer units. */
export function fromBalance(amount: number, format: MoneyFormat): number {
  const usd = format.billingUnit === 'usd' ? amount : amount / format.creditsPerUsd;
  return Math.round(usd * UNITS_PER_USD);
}
