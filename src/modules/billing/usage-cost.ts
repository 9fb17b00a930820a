import { promptTokens, USAGE_CLASSES, type UsageClass, type UsageClasses } from '../../core/usage.ts';
import type { PerTokenPrice } from './price-schema.ts';

// What a text call's tokens cost, per class, in ledger units (1 USD = 1,000,000 units, so a price in
// USD per million tokens is the units per token). Prices are taken to the millionth of a unit per
// token and every class's tokens times its price is summed exactly (BigInt: billions of tokens at a
// high price exceed 2^53 millionths); the call's total is rounded up once. Each class's part is its
// exact cost rounded down, and what rounding the total added goes to the dearest class, so the parts
// always sum to the total.

export type UsageCost = Record<UsageClass, number> & { total: number };

const MICRO = 1_000_000n;
const micro = (price: number) => BigInt(Math.round(price * 1_000_000));

/** Per class, its price per token: a class without its own costs the input price (never less than the operator set). */
function pricesOf(price: PerTokenPrice, usage: UsageClasses): Record<UsageClass, number> {
  const tier = price.above_tokens && promptTokens(usage) > price.above_tokens.threshold ? price.above_tokens : undefined;
  const input = tier?.input_per_million ?? price.input_per_million;
  return {
    input,
    cache_read: tier ? (tier.cache_read_per_million ?? tier.input_per_million) : (price.cache_read_per_million ?? input),
    cache_write: price.cache_write_per_million ?? input,
    output: tier?.output_per_million ?? price.output_per_million,
  };
}

export function costByClass(price: PerTokenPrice, usage: UsageClasses): UsageCost {
  const prices = pricesOf(price, usage);
  return costInNumbers(prices, usage) ?? costInBigInts(prices, usage);
}

const MICRO_N = 1_000_000;

/**
 * The same sums in doubles, taken only when every product and the sum stay below 2^53 (then they
 * are exact integers, as in BigInt): a call's tokens at an ordinary price always do, and BigInt
 * arithmetic allocates on every step.
 */
function costInNumbers(prices: Record<UsageClass, number>, usage: UsageClasses): UsageCost | undefined {
  const exact = [0, 0, 0, 0];
  let sum = 0;
  let dearest = 0;
  for (let i = 0; i < USAGE_CLASSES.length; i++) {
    const c = USAGE_CLASSES[i]!;
    const e = Math.max(0, Math.round(usage[c])) * Math.round(prices[c] * MICRO_N);
    if (!Number.isSafeInteger(e)) return undefined;
    exact[i] = e;
    sum += e;
    if (e > exact[dearest]!) dearest = i;
  }
  if (!Number.isSafeInteger(sum + MICRO_N)) return undefined;
  // Integer division by remainders: exact where a quotient of doubles could round.
  const whole = (e: number) => (e - (e % MICRO_N)) / MICRO_N;
  const total = whole(sum) + (sum % MICRO_N > 0 ? 1 : 0);
  const parts = exact.map(whole);
  parts[dearest]! += total - (parts[0]! + parts[1]! + parts[2]! + parts[3]!);
  return { total, input: parts[0]!, cache_read: parts[1]!, cache_write: parts[2]!, output: parts[3]! };
}

function costInBigInts(prices: Record<UsageClass, number>, usage: UsageClasses): UsageCost {
  const exact = USAGE_CLASSES.map((c) => BigInt(Math.max(0, Math.round(usage[c]))) * micro(prices[c]));
  const sum = exact.reduce((a, b) => a + b, 0n);
  const total = (sum + MICRO - 1n) / MICRO;
  const parts = exact.map((e) => e / MICRO);
  const dearest = exact.reduce((best, e, i) => (e > exact[best]! ? i : best), 0);
  parts[dearest]! += total - parts.reduce((a, b) => a + b, 0n);
  const cost = { total: Number(total) } as UsageCost;
  USAGE_CLASSES.forEach((c, i) => (cost[c] = Number(parts[i])));
  return cost;
}
