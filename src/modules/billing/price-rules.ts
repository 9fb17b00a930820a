import { AVATAR_REVIEW_MODEL, IMAGE_QUALITIES, MODELS, resolveModel } from '../../core/catalog/models.ts';
import type { ModelPrice } from './price-schema.ts';

// What a model's price must be beyond its shape (price-schema.ts), so that every call the catalog
// lets a caller make can be quoted, and quoted at a sane amount: the price is of the kind the model
// is billed by (a per_token price on a per-image model would quote its images as a few tokens), it
// covers every tier (and quality) a caller may request (a missing one is a quote that throws, so a
// 500 after the caller was accepted), it names no tier or quality the catalog does not know (a typo
// that prices nothing), and each amount is small enough that the largest call stays far inside the
// integers a double holds exactly.
//
// The maxima: USD 1,000 per image, per second of video or per reviewed asset, USD 10,000 per million
// tokens, 1,000,000 output tokens per image. The largest call then costs about USD 20,000 (20 assets,
// 15 s of video, 4 images) or, per token, ~1.2M tokens of prompt and output at 10,000 units each:
// about 2e10 ledger units, 400,000 times below 2^53. A group's prices are checked the same way after
// its multiplier, so no group can raise them further.

export const MAX_USD_PER_UNIT = 1000;
export const MAX_USD_PER_MILLION_TOKENS = 10_000;
export const MAX_OUTPUT_TOKENS_PER_IMAGE = 1_000_000;

type Field = keyof ModelPrice;

/** How a model is billed: the one price field it is quoted by, and the other fields that may sit beside it. */
interface Billing {
  field: Field;
  also: Field[];
  /** The tiers a caller may request (per_image, per_second). */
  tiers?: string[];
  /** The tiers the catalog knows for this kind of model; a key outside them is a typo. */
  knownTiers?: string[];
  /** Quality keys a tier may be split by, and whether a caller chooses among them. */
  qualities?: { known: readonly string[]; requested: boolean };
}

const lower = (values: string[]) => [...new Set(values.map((v) => v.toLowerCase()))];
const IMAGE_TIERS = lower(MODELS.flatMap((m) => (m.kind === 'image' ? [...m.resolutions, ...m.downgraded] : [])));
const VIDEO_TIERS = lower(MODELS.flatMap((m) => (m.kind === 'video' ? m.resolutions : [])));

function billingOf(model: string): Billing {
  if (model === AVATAR_REVIEW_MODEL) return { field: 'per_asset', also: [] };
  const entry = resolveModel(model);
  // Not in the catalogue: a text model (ours, or one an operator serves under its own name).
  if (!entry) return { field: 'per_token', also: [] };
  if (entry.kind === 'video') return { field: 'per_second', also: [], tiers: entry.resolutions, knownTiers: VIDEO_TIERS };
  if (entry.perToken) return { field: 'per_token', also: ['output_tokens_per_image'] };
  return {
    field: 'per_image',
    also: [],
    tiers: entry.resolutions,
    knownTiers: IMAGE_TIERS,
    qualities: { known: IMAGE_QUALITIES, requested: entry.official },
  };
}

const FIELD_WORDS: Partial<Record<Field, string>> = { per_image: 'per image', per_second: 'per second', per_token: 'per token', per_asset: 'per reviewed asset' };

function amount(path: string, value: number, max: number, what: string): string | undefined {
  if (!Number.isFinite(value) || value < 0) return `${path} must be a non-negative number`;
  if (value > max) return `${path} must be at most ${max} (USD ${what}), got ${value}`;
  return undefined;
}

function tiered(path: string, table: Record<string, number | Record<string, number>>, billing: Billing, model: string): string | undefined {
  const keys = Object.keys(table);
  for (const key of keys) {
    if (!billing.knownTiers!.includes(key.toLowerCase())) return `${path}/${key} is not a tier the catalogue knows (${billing.knownTiers!.join(', ')})`;
  }
  for (const tier of billing.tiers!) {
    if (!keys.some((k) => k.toLowerCase() === tier)) return `${path} has no price for ${tier}, which ${model} can be called at`;
  }
  for (const [key, value] of Object.entries(table)) {
    const at = `${path}/${key}`;
    if (typeof value === 'number') {
      const bad = amount(at, value, MAX_USD_PER_UNIT, FIELD_WORDS[billing.field]!);
      if (bad) return bad;
      continue;
    }
    const qualities = billing.qualities;
    if (!qualities) return `${at} must be a number`;
    const named = Object.keys(value).map((q) => q.toLowerCase());
    const unknown = Object.keys(value).find((q) => !qualities.known.includes(q.toLowerCase()));
    if (unknown) return `${at}/${unknown} is not a quality (${qualities.known.join(', ')})`;
    // A quality without its own price costs the `auto` one (pricing.ts); without `auto`, each must be there.
    const needed = named.includes('auto') ? [] : qualities.requested ? qualities.known : ['auto'];
    const missing = needed.find((q) => !named.includes(q));
    if (missing) return `${at} has no price for quality ${missing} (a price for auto stands for every quality without one)`;
    for (const [q, each] of Object.entries(value)) {
      const bad = amount(`${at}/${q}`, each, MAX_USD_PER_UNIT, FIELD_WORDS[billing.field]!);
      if (bad) return bad;
    }
  }
  return undefined;
}

function perToken(path: string, price: NonNullable<ModelPrice['per_token']>): string | undefined {
  const above = price.above_tokens;
  const rates: [string, number | undefined][] = [
    ['input_per_million', price.input_per_million],
    ['output_per_million', price.output_per_million],
    ['cache_read_per_million', price.cache_read_per_million],
    ['cache_write_per_million', price.cache_write_per_million],
    ['above_tokens/input_per_million', above?.input_per_million],
    ['above_tokens/output_per_million', above?.output_per_million],
    ['above_tokens/cache_read_per_million', above?.cache_read_per_million],
  ];
  for (const [name, value] of rates) {
    const bad = value === undefined ? undefined : amount(`${path}/${name}`, value, MAX_USD_PER_MILLION_TOKENS, 'per million tokens');
    if (bad) return bad;
  }
  return undefined;
}

/** What is wrong with `price` as the price of `model` (the message names the field under `path`), or undefined. */
export function priceProblem(path: string, model: string, price: ModelPrice): string | undefined {
  const entry = resolveModel(model);
  // Calls are priced by the model's id: a price under an alias would price nothing.
  if (entry && entry.id !== model) return `${path}: ${model} is another name of ${entry.id}; price ${entry.id}`;
  const billing = billingOf(model);
  const words = FIELD_WORDS[billing.field];
  for (const field of Object.keys(price) as Field[]) {
    if (field !== billing.field && !billing.also.includes(field)) return `${path}/${field}: ${model} is billed ${words} (${billing.field}), not by ${field}`;
  }
  const at = `${path}/${billing.field}`;
  if (price[billing.field] === undefined) return `${path} must have ${billing.field}: ${model} is billed ${words}`;
  if (billing.field === 'per_image') return tiered(at, price.per_image!, billing, model);
  if (billing.field === 'per_second') return tiered(at, price.per_second!, billing, model);
  if (billing.field === 'per_asset') return amount(at, price.per_asset!, MAX_USD_PER_UNIT, FIELD_WORDS.per_asset!);
  const perImage = price.output_tokens_per_image;
  if (perImage !== undefined && perImage > MAX_OUTPUT_TOKENS_PER_IMAGE) {
    return `${path}/output_tokens_per_image must be at most ${MAX_OUTPUT_TOKENS_PER_IMAGE} (got ${perImage})`;
  }
  return perToken(at, price.per_token!);
}
