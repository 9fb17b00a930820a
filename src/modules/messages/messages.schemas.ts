import { Type, type Static } from 'typebox';

const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: true });
const ImageBlock = Type.Object(
  {
    type: Type.Literal('image'),
    source: Type.Object({ type: Type.Literal('base64'), media_type: Type.String({ maxLength: 100 }), data: Type.String() }, { additionalProperties: true }),
  },
  { additionalProperties: true },
);

// POST /v1/messages (SPEC 4.8): the messages format, with the optional fields its users expect.
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, examples: ['chatgen-4-haiku'] }),
    max_tokens: Type.Integer({ minimum: 1, maximum: 65536 }),
    messages: Type.Array(
      Type.Object(
        {
          role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
          content: Type.Union([Type.String(), Type.Array(Type.Union([TextBlock, ImageBlock]), { minItems: 1 })]),
        },
        { additionalProperties: true },
      ),
      { minItems: 1 },
    ),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(TextBlock)])),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: 8 })),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequest>;

// POST /v1/messages/count_tokens: the same prompt, without max_tokens (nothing is generated).
export const CountTokensRequest = Type.Omit(MessagesRequest, ['max_tokens', 'stream']);

export const MessagesResponse = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    content: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() })),
    model: Type.String(),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object({
      input_tokens: Type.Integer({ description: 'The prompt tokens read uncached' }),
      cache_creation_input_tokens: Type.Optional(Type.Integer({ description: 'The prompt tokens written into the prompt cache' })),
      cache_read_input_tokens: Type.Optional(Type.Integer({ description: 'The prompt tokens read from the prompt cache' })),
      output_tokens: Type.Integer(),
    }),
  },
  { $id: 'MessagesResponse' },
);
