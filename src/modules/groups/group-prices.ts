import type { ModelPrice, PricingFile } from '../billing/price-schema.ts';
import { priceProblem } from '../billing/price-rules.ts';

// A group's price table, derived from the one in force: a model the group overrides costs the
// override, any other the base price times the group's multiplier. The prices themselves are scaled
// (USD, as the table holds them), so a quote from the derived table is rounded exactly as a base
// quote is (billing/pricing.ts, usage-cost.ts) and GET /v1/models shows the very numbers charged.

export interface Group {
  name: string;
  multiplier: number;
  /** The models its accounts may call; undefined = all. */
  models?: ReadonlySet<string>;
  /** Per model, the price its accounts pay instead of the scaled base price. */
  prices: Record<string, ModelPrice>;
}

export const DEFAULT_GROUP = 'default';

export const defaultGroup = (): Group => ({ name: DEFAULT_GROUP, multiplier: 1, prices: {} });

const times = (value: number, multiplier: number) => value * multiplier;

function scaleRecord<T extends number | Record<string, number>>(table: Record<string, T>, m: number): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(table)) {
    out[k] = (typeof v === 'number' ? times(v, m) : scaleRecord(v as Record<string, number>, m)) as T;
  }
  return out;
}

/** One model's price times `m`; token counts (threshold, output tokens per image) are not prices and stay. */
export function scalePrice(price: ModelPrice, m: number): ModelPrice {
  if (m === 1) return price;
  const out: ModelPrice = { ...price };
  if (price.per_image) out.per_image = scaleRecord(price.per_image, m);
  if (price.per_second) out.per_second = scaleRecord(price.per_second, m);
  if (price.per_asset !== undefined) out.per_asset = times(price.per_asset, m);
  const t = price.per_token;
  if (t) {
    out.per_token = {
      input_per_million: times(t.input_per_million, m),
      output_per_million: times(t.output_per_million, m),
      ...(t.cache_read_per_million !== undefined ? { cache_read_per_million: times(t.cache_read_per_million, m) } : {}),
      ...(t.cache_write_per_million !== undefined ? { cache_write_per_million: times(t.cache_write_per_million, m) } : {}),
      ...(t.above_tokens
        ? {
            above_tokens: {
              threshold: t.above_tokens.threshold,
              input_per_million: times(t.above_tokens.input_per_million, m),
              output_per_million: times(t.above_tokens.output_per_million, m),
              ...(t.above_tokens.cache_read_per_million !== undefined ? { cache_read_per_million: times(t.above_tokens.cache_read_per_million, m) } : {}),
            },
          }
        : {}),
    };
  }
  return out;
}

/** The table `group`'s accounts pay: every base model, overridden or scaled (the group's own list is checked apart). */
export function groupTable(base: PricingFile, group: Group): PricingFile {
  if (group.multiplier === 1 && Object.keys(group.prices).length === 0) return base;
  const models: Record<string, ModelPrice> = {};
  for (const [id, price] of Object.entries(base.models)) models[id] = group.prices[id] ?? scalePrice(price, group.multiplier);
  for (const [id, price] of Object.entries(group.prices)) models[id] ??= price;
  return { models };
}

/** Why `table` does not fit `group` (its multiplier takes a base price past the maxima), or undefined. */
export function groupPastMaxima(table: PricingFile, group: Pick<Group, 'name' | 'multiplier' | 'prices'>): string | undefined {
  const problem = scaledProblem(table, group.prices, group.multiplier);
  return problem && `group ${group.name}: its multiplier ${group.multiplier} times these prices: ${problem}`;
}

/** The first base price the multiplier takes past the maxima, among the models the group does not override. */
export function scaledProblem(table: PricingFile, overrides: Record<string, ModelPrice>, multiplier: number): string | undefined {
  for (const [model, base] of Object.entries(table.models)) {
    if (overrides[model] || priceProblem('', model, base)) continue;
    const problem = priceProblem(model, model, scalePrice(base, multiplier));
    if (problem) return problem;
  }
  return undefined;
}
