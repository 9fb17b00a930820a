import { Type, type Static } from 'typebox';

// The price table's shape: one schema checks a table (the file's or one an operator sends), types it,
// and documents it.

const Price = Type.Number({ minimum: 0 });
// A field this table does not know is refused, not ignored: a price the operator meant to set that
// silently did nothing would bill every call wrongly.
const strict = { additionalProperties: false } as const;
export const AboveTokens = Type.Object(
  { threshold: Type.Integer({ minimum: 0 }), input_per_million: Price, output_per_million: Price, cache_read_per_million: Type.Optional(Price) },
  strict,
);
export const PerToken = Type.Object(
  {
    input_per_million: Price,
    output_per_million: Price,
    cache_read_per_million: Type.Optional(Price),
    cache_write_per_million: Type.Optional(Price),
    above_tokens: Type.Optional(AboveTokens),
  },
  strict,
);
export const ModelPrice = Type.Object(
  {
    per_image: Type.Optional(Type.Record(Type.String(), Type.Union([Price, Type.Record(Type.String(), Price)]))),
    per_second: Type.Optional(Type.Record(Type.String(), Price)),
    per_token: Type.Optional(PerToken),
    output_tokens_per_image: Type.Optional(Type.Integer({ minimum: 0 })),
    per_asset: Type.Optional(Price),
  },
  strict,
);
export const PricingFile = Type.Object({ $comment: Type.Optional(Type.String()), models: Type.Record(Type.String(), ModelPrice) }, strict);
export type PerTokenPrice = Static<typeof PerToken>;
export type PricingFile = Static<typeof PricingFile>;
export type ModelPrice = Static<typeof ModelPrice>;
