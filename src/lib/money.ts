// Money is integer ledger units: 1 USD = 1,000,000 units. Floats exist only at the JSON edge.
export const UNITS_PER_USD = 1_000_000;

/** BILLING_UNIT: the unit balances, costs and quotas are shown and typed in. */
export type BillingUnit = 'usd' | 'credits';

export interface MoneyFormat {
  billingUnit: BillingUnit;
  creditsPerUsd: number;
}

/** Units -> the configured balance unit (USD or credits), as the float the API shows. */
export function toBalance(units: number, format: MoneyFormat): number {
  const usd = units / UNITS_PER_USD;
  return format.billingUnit === 'usd' ? usd : usd * format.creditsPerUsd;
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
