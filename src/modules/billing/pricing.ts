import fs from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { UNITS_PER_USD } from '../../lib/money.ts';
import { projectRoot } from '../../lib/project-root.ts';

// Prices are data: a JSON file the operator can replace (PRICING_FILE). They are read once at start
// and turned into integer ledger units, so no float ever reaches a balance.

const Price = Type.Number({ minimum: 0 });
const ModelPrice = Type.Object({
  per_image: Type.Optional(Type.Record(Type.String(), Type.Union([Price, Type.Record(Type.String(), Price)]))),
  per_second: Type.Optional(Type.Record(Type.String(), Price)),
  per_token: Type.Optional(Type.Object({ input_per_million: Price, output_per_million: Price })),
  output_tokens_per_image: Type.Optional(Type.Integer({ minimum: 0 })),
  per_asset: Type.Optional(Price),
});
export const PricingFile = Type.Object({ models: Type.Record(Type.String(), ModelPrice) });
export type PricingFile = Static<typeof PricingFile>;
type ModelPrice = Static<typeof ModelPrice>;

export const DEFAULT_PRICING_FILE = path.join(projectRoot(), 'config', 'pricing.json');

export class PricingError extends Error {}

/** Checks a price table (a file's or one an operator sends); the error names the first bad field. */
export function parsePricing(value: unknown, source: string): PricingFile {
  if (!Value.Check(PricingFile, value)) {
    const first = [...Value.Errors(PricingFile, value)][0];
    throw new PricingError(`${source}: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
  }
  return value;
}

export function readPricingFile(file = DEFAULT_PRICING_FILE): PricingFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new PricingError(`PRICING_FILE ${file}: ${err instanceof Error ? err.message : err}`);
  }
  return parsePricing(parsed, `PRICING_FILE ${file}`);
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

  /** Per token; `outputTokens` defaults to the model's fixed count per image times `n`. */
  tokenUnits(model: string, inputTokens: number, outputTokens: number): number {
    const price = this.model(model).per_token;
    if (!price) throw new PricingError(`${model} is not priced per token`);
    // Prices per million tokens times 1e6 units per USD: the units per token are the price itself.
    return Math.ceil(inputTokens * price.input_per_million + outputTokens * price.output_per_million);
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
