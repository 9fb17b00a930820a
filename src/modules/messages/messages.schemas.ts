import { Type, type Static } from 'typebox';

const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: true });
// POST /v1/messages: the messages format. Only what the gateway itself reads is checked
// here (the model, the output ceiling, the turns); every other field (tools, thinking, cache_control,
// newer ones) is the upstream's to judge, and the decoder's (formats/messages) where it translates.
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, examples: ['chatgen-4-haiku'] }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(
      Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))]) }, { additionalProperties: true }),
      { minItems: 1 },
    ),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(TextBlock)])),
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
    content: Type.Array(Type.Object({ type: Type.String({ description: 'text, tool_use, thinking, ...' }) }, { additionalProperties: true })),
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
