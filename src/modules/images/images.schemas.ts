import { Type, type Static } from 'typebox';

// POST /v1/images/generations. The schema types every field, so `n: "2"` is a 400;
// per-model ranges and cross-field rules live with the catalogue (catalog/image-rules.ts).
// A field not listed is a 400 naming it: a misspelt field would otherwise make a default image.
export const ImageRequest = Type.Object(
  {
    model: Type.Optional(Type.String({ maxLength: 100, description: 'Default imggen-2-official' })),
    prompt: Type.String({ description: 'What to draw' }),
    size: Type.Optional(Type.String({ maxLength: 20, description: 'A ratio such as 16:9, `auto`, or <width>x<height> (imggen-2-official)' })),
    resolution: Type.Optional(Type.String({ maxLength: 10, description: '1k / 2k / 4k, per model' })),
    quality: Type.Optional(Type.String({ maxLength: 10 })),
    background: Type.Optional(Type.String({ maxLength: 20 })),
    moderation: Type.Optional(Type.String({ maxLength: 10 })),
    output_format: Type.Optional(Type.String({ maxLength: 10 })),
    output_compression: Type.Optional(Type.Integer()),
    n: Type.Optional(Type.Integer()),
    image_urls: Type.Optional(Type.Array(Type.String())),
    mask_url: Type.Optional(Type.String()),
    webhook: Type.Optional(Type.String({ maxLength: 2048, description: 'Callback base address; `/callback` is appended' })),
  },
  { additionalProperties: false },
);
export type ImageRequest = Static<typeof ImageRequest>;
