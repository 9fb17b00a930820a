import { Type, type Static } from 'typebox';

const Part = Type.Object(
  {
    text: Type.Optional(Type.String()),
    inlineData: Type.Optional(Type.Object({ mimeType: Type.String({ maxLength: 100 }), data: Type.String() })),
  },
  { additionalProperties: true },
);

const contents = (description?: string) =>
  Type.Array(Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(Part, { minItems: 1 }) }, { additionalProperties: true }), { minItems: 1, ...(description ? { description } : {}) });

// The optional fields of a generateContent body that the gateway reads itself; the others
// (tools, toolConfig, ...) pass as they came.
const Settings = {
  systemInstruction: Type.Optional(Type.Object({ parts: Type.Array(Part) }, { additionalProperties: true })),
  generationConfig: Type.Optional(
    Type.Object(
      {
        maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 65536 })),
        temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
        stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 5 })),
      },
      { additionalProperties: true },
    ),
  ),
  safetySettings: Type.Optional(Type.Array(Type.Object({ category: Type.String(), threshold: Type.String() }, { additionalProperties: true }))),
};

/** A whole generateContent body, as countTokens takes it in `generateContentRequest`. */
const GenerateContentRequest = Type.Object(
  { model: Type.Optional(Type.String({ description: 'models/{model}; the path names the model counted' })), contents: contents(), ...Settings },
  { additionalProperties: true, description: 'countTokens only, instead of contents: a whole generateContent body, counted with its systemInstruction and tools' },
);
export type GenerateContentRequest = Static<typeof GenerateContentRequest>;

// POST /v1beta/models/{model}:{method}: contents with text and inline images, plus the optional
// fields of that format. countTokens takes `contents` alone or a whole body in
// `generateContentRequest` (exactly one of them: checked by the route, as the other methods need
// `contents`). Proto field names (snake_case) are renamed before this schema reads the body.
export const NativeRequest = Type.Object(
  {
    contents: Type.Optional(contents('required, but countTokens takes generateContentRequest instead')),
    ...Settings,
    generateContentRequest: Type.Optional(GenerateContentRequest),
  },
  { additionalProperties: true },
);
export type NativeRequest = Static<typeof NativeRequest>;

const Rating = Type.Object({ category: Type.String(), probability: Type.String() });

// The native answer: candidates with text parts, safety ratings and usage.
export const NativeResponse = Type.Object({
  candidates: Type.Array(
    Type.Object({
      content: Type.Object({ role: Type.String(), parts: Type.Array(Type.Object({ text: Type.String() })) }),
      finishReason: Type.Optional(Type.String()),
      index: Type.Integer(),
      safetyRatings: Type.Array(Rating),
    }),
  ),
  promptFeedback: Type.Object({ safetyRatings: Type.Array(Rating) }),
  usageMetadata: Type.Object({
    promptTokenCount: Type.Integer(),
    candidatesTokenCount: Type.Integer(),
    totalTokenCount: Type.Integer(),
    thoughtsTokenCount: Type.Integer(),
    cachedContentTokenCount: Type.Optional(Type.Integer({ description: 'The part of promptTokenCount read from a cache' })),
    promptTokensDetails: Type.Array(Type.Object({ modality: Type.String(), tokenCount: Type.Integer() })),
  }),
});
