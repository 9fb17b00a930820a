import { Type, type Static } from 'typebox';

// POST /v1/chat/completions: the OpenAI chat-completions format (openai@6 ChatCompletionCreateParams).
// Clients send many optional fields (user, seed, logprobs, ...): the ones listed are read, the rest
// are accepted and ignored, as every peer gateway does, so unchanged clients keep working. A field
// the API types `| null` takes null too, meaning not set (the decoder reads it as left out).

// Content parts (text, image_url, file, input_audio, ...) are the decoder's (formats/chat) to read.
const Part = Type.Object({ type: Type.String() }, { additionalProperties: true });

const Message = Type.Object(
  {
    role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool'].map((r) => Type.Literal(r))),
    content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(Part)])),
    name: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(Type.Unknown())),
    tool_call_id: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ChatRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, examples: ['textgen-2.5-flash'] }),
    messages: Type.Array(Message, { minItems: 1, examples: [[{ role: 'user', content: 'Say hello' }]] }),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 65536 }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 65536 }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1 }), Type.Null()], { description: 'One choice per call' })),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.Unknown(), { description: 'Function tools: as they are to an OpenAI upstream, translated for the others' })),
    tool_choice: Type.Optional(Type.Unknown()),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    response_format: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'json_schema or json_object: as it is to an OpenAI upstream, translated for the others' })),
  },
  { additionalProperties: true },
);
export type ChatRequest = Static<typeof ChatRequest>;

export const ChatResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({ role: Type.Literal('assistant'), content: Type.Union([Type.String(), Type.Null()]), refusal: Type.Null(), tool_calls: Type.Optional(Type.Array(Type.Unknown())) }),
        finish_reason: Type.String(),
        logprobs: Type.Null(),
      }),
    ),
    usage: Type.Object({
      prompt_tokens: Type.Integer({ description: 'Every prompt token, the cached ones included' }),
      completion_tokens: Type.Integer({ description: 'Every produced token, reasoning included' }),
      total_tokens: Type.Integer(),
      prompt_tokens_details: Type.Optional(Type.Object({ cached_tokens: Type.Integer() })),
      completion_tokens_details: Type.Optional(Type.Object({ reasoning_tokens: Type.Integer() })),
    }),
  },
  { $id: 'ChatCompletion' },
);
