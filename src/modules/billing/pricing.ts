import fs from 'node:fs';
import path from 'node:path';
import { Value } from 'typebox/value';
import { UNITS_PER_USD } from '../../lib/money.ts';
import { projectRoot } from '../../lib/project-root.ts';
import type { UsageClasses } from '../../core/usage.ts';
import { costByClass, type UsageCost } from './usage-cost.ts';
import { AboveTokens, ModelPrice, PerToken, PricingFile } from './price-schema.ts';
import { priceProblem } from './price-rules.ts';

// Prices are data: a JSON file the operator can replace (PRICING_FILE). They are read once at start
// and turned into integer ledger units, so no float ever reaches a balance.

export { PricingFile, type PerTokenPrice } from './price-schema.ts';

export const DEFAULT_PRICING_FILE = path.join(projectRoot(), 'config', 'pricing.json');

export class PricingError extends Error {}

/** Checks a price table (a file's or one an operator sends); the error names the first bad field. */
export function parsePricing(value: unknown, source: string): PricingFile {
  if (!Value.Check(PricingFile, value)) {
    const errors = [...Value.Errors(PricingFile, value)];
    const unknown = unknownField(value, errors.map((e) => e.instancePath));
    if (unknown) throw new PricingError(`${source}: ${unknown} is not a price field`);
    const first = errors[0];
    throw new PricingError(`${source}: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
  }
  return value;
}

/**
 * Checks that every model's price can quote every call the catalogue allows, at a sane amount
 * (price-rules.ts); the error names the model and field. Tables are checked this way where they
 * come in (PRICING_FILE, PUT /admin/prices, a group's prices).
 */
export function assertPrices(table: PricingFile, source: string): void {
  for (const [model, price] of Object.entries(table.models)) {
    const problem = priceProblem(`/models/${model}`, model, price);
    if (problem) throw new PricingError(`${source}: ${problem}`);
  }
}

const KNOWN: Record<string, readonly string[]> = {
  '': Object.keys(PricingFile.properties),
  model: Object.keys(ModelPrice.properties),
  per_token: Object.keys(PerToken.properties),
  above_tokens: Object.keys(AboveTokens.properties),
};

/** The path of the first field no schema knows (at the root, a model, its per_token or above_tokens), if any. */
function unknownField(value: unknown, paths: string[]): string | undefined {
  for (const path of paths) {
    const parts = path.split('/').slice(1);
    const at = parts.reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), value);
    if (!at || typeof at !== 'object' || Array.isArray(at)) continue;
    const level = parts.length === 0 ? '' : parts.length === 2 && parts[0] === 'models' ? 'model' : parts[parts.length - 1]!;
    const known = KNOWN[level];
    const extra = known && Object.keys(at).find((k) => !known.includes(k));
    if (extra) return `${path}/${extra}`;
  }
  return undefined;
}

export function readPricingFile(file = DEFAULT_PRICING_FILE): PricingFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new PricingError(`PRICING_FILE ${file}: ${err instanceof Error ? err.message : err}`);
  }
  const table = parsePricing(parsed, `PRICING_FILE ${file}`);
  assertPrices(table, `PRICING_FILE ${file}`);
  return table;
}

export function loadPricing(file = DEFAULT_PRICING_FILE): Pricing {
  return new Pricing(readPricingFile(file));
}

const usd = (amount: number) => Math.round(amount * UNITS_PER_USD);

function lookup<T>(table: Record<string, T> | undefined, key: string | undefined): T | undefined {
  if (!table || key === undefined) return undefined;
  const wanted = key.toLowerCase();
  const found = Object.keys(table).find((k) => k.toLowerCase() === wanted);
  return found === undefined ? undefined : table[found];
}

export class Pricing {
  constructor(private file: PricingFile) {}

  /** The table in force (the operator's, once one was saved, else the file's). */
  table(): PricingFile {
    return this.file;
  }

  /** Swaps the whole table at once: a quote never mixes old and new prices. */
  replace(file: PricingFile): void {
    this.file = file;
  }

  private model(model: string): ModelPrice {
    const price = this.file.models[model];
    if (!price) throw new PricingError(`no price for model ${model}`);
    return price;
  }

  has(model: string): boolean {
    return model in this.file.models;
  }

  /** Refuses to start with a pricing file that leaves a served model without a price. */
  assertCovers(models: string[]): void {
    const missing = models.filter((m) => !this.has(m));
    if (missing.length > 0) throw new PricingError(`PRICING_FILE has no price for: ${missing.join(', ')}`);
  }

  /** Per image, by resolution tier (and quality where the tier has them). */
  imageUnits(model: string, resolution: string, quality: string | undefined, n: number): number {
    const tier = lookup(this.model(model).per_image, resolution);
    if (tier === undefined) throw new PricingError(`no price for ${model} at ${resolution}`);
    const each = typeof tier === 'number' ? tier : (lookup(tier, quality ?? 'auto') ?? lookup(tier, 'auto'));
    if (each === undefined) throw new PricingError(`no price for ${model} at ${resolution}/${quality}`);
    return usd(each) * n;
  }

  /** Per token, every token at the input or output price (a hold's estimate, a task's tokens). */
  tokenUnits(model: string, inputTokens: number, outputTokens: number): number {
    return this.usageCost(model, { input: inputTokens, cache_read: 0, cache_write: 0, output: outputTokens }).total;
  }

  /** A text call's cost by token class (usage-cost.ts says how it is rounded). */
  usageCost(model: string, usage: UsageClasses): UsageCost {
    const price = this.model(model).per_token;
    if (!price) throw new PricingError(`${model} is not priced per token`);
    return costByClass(price, usage);
  }

  outputTokensPerImage(model: string): number {
    return this.model(model).output_tokens_per_image ?? 0;
  }

  isPerToken(model: string): boolean {
    return Boolean(this.file.models[model]?.per_token);
  }

  videoUnits(model: string, resolution: string, seconds: number): number {
    const each = lookup(this.model(model).per_second, resolution);
    if (each === undefined) throw new PricingError(`no price for ${model} at ${resolution}`);
    return usd(each * seconds);
  }

  perAssetUnits(model: string): number {
    return usd(this.model(model).per_asset ?? 0);
  }
}
