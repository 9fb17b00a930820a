import { UNITS_PER_USD } from './money.ts';

// How Stripe counts an amount of a currency: in its smallest unit. Cents for most; whole units
// for the currencies Stripe lists as zero-decimal, thousandths for the three-decimal ones. One
// unit of the currency buys the balance one USD is (UNITS_PER_USD ledger units).

const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

export const isThreeDecimal = (currency: string) => THREE_DECIMAL.has(currency);

/** Ledger units one smallest currency unit (as Stripe counts amounts) buys. */
export const unitsPerMinor = (currency: string) =>
  ZERO_DECIMAL.has(currency) ? UNITS_PER_USD : THREE_DECIMAL.has(currency) ? UNITS_PER_USD / 1000 : UNITS_PER_USD / 100;

/** Stripe takes at most eight digits of the smallest unit in one amount (999,999.99 USD). */
export const STRIPE_MAX_MINOR = 99_999_999;
