import { Type, type Static } from 'typebox';

// POST /v1/responses: the OpenAI Responses format (openai@6 ResponseCreateParams). The gateway reads
// the model, the stream flag and the output ceiling; `input` items, tools, reasoning and the other
// fields are the decoder's (formats/responses) where it translates, the upstream's where it does not.
export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, examples: ['textgen-2.5-flash'] }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))], { examples: ['Say hello'] })),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }), { description: 'function (and custom) tools' })),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);
export type ResponsesRequest = Static<typeof ResponsesRequest>;

export const ResponseObject = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('response'),
    created_at: Type.Number(),
    status: Type.String(),
    model: Type.String(),
    output: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    usage: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true, $id: 'ResponseObject' },
);
