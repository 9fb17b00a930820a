import { describe, expect, it } from 'vitest';
import { costByClass } from '../src/modules/billing/usage-cost.ts';
import type { PerTokenPrice } from '../src/modules/billing/price-schema.ts';

// costByClass sums in doubles when every product stays below 2^53 and in BigInts otherwise; both
// must give what the exact rule gives: each class's exact cost rounded down, the total rounded up
// once, the rounding's remainder on the dearest class. The reference here is that rule in BigInts.
const CLASSES = ['input', 'cache_read', 'cache_write', 'output'] as const;

function reference(price: PerTokenPrice, usage: Record<(typeof CLASSES)[number], number>) {
  const perClass = {
    input: price.input_per_million,
    cache_read: price.cache_read_per_million ?? price.input_per_million,
    cache_write: price.cache_write_per_million ?? price.input_per_million,
    output: price.output_per_million,
  };
  const exact = CLASSES.map((c) => BigInt(usage[c]) * BigInt(Math.round(perClass[c] * 1e6)));
  const total = (exact.reduce((a, b) => a + b, 0n) + 999_999n) / 1_000_000n;
  const parts = exact.map((e) => e / 1_000_000n);
  const dearest = exact.reduce((best, e, i) => (e > exact[best]! ? i : best), 0);
  parts[dearest]! += total - parts.reduce((a, b) => a + b, 0n);
  return { total: Number(total), ...Object.fromEntries(CLASSES.map((c, i) => [c, Number(parts[i])])) };
}

/** A fixed-seed generator (mulberry32), so a failure repeats. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('text cost per token class', () => {
  it('is exact for ordinary calls and for token counts past 2^53 millionths', () => {
    const next = random(42);
    const int = (n: number) => Math.floor(next() * n);
    for (let i = 0; i < 20_000; i++) {
      const price: PerTokenPrice = {
        input_per_million: int(3) ? next() * 20 : int(1e6) / 1e3,
        output_per_million: next() * 100,
        ...(int(2) ? { cache_read_per_million: next() * 5 } : {}),
        ...(int(2) ? { cache_write_per_million: next() * 7 } : {}),
      };
      const usage = { input: int(4) ? int(1e6) : int(1e13), cache_read: int(1e5), cache_write: int(1e5), output: int(5e4) };
      expect(costByClass(price, usage)).toEqual(reference(price, usage));
    }
  });

  it('rounds a fraction of a unit up once, onto the dearest class', () => {
    const cost = costByClass({ input_per_million: 0.3, output_per_million: 0.7 }, { input: 1, cache_read: 1, cache_write: 0, output: 1 });
    expect(cost).toEqual({ total: 2, input: 0, cache_read: 0, cache_write: 0, output: 2 });
  });
});
