import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';

// One conversation written in each of the four wire formats (what a client of that format sends), and one
// answer per format (what its upstream returns): the inputs of the translation tables.
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const PDF = Buffer.from('%PDF-1.4 tiny').toString('base64');
export const WEATHER_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
export const TIME_SCHEMA = { type: 'object' as const, properties: { tz: { type: 'string' } }, required: ['tz'] };
export const OUT_SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

export const messagesRequest = {
  model: 'claude-x',
  max_tokens: 1000,
  system: 'Be brief.',
  messages: [
    { role: 'user', content: [
      { type: 'text', text: 'Look at these.', cache_control: { type: 'ephemeral' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
    ] },
    { role: 'assistant', content: [
      { type: 'text', text: 'Calling tools.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'CET' } },
    ] },
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
      { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '12:00' }], is_error: true },
    ] },
    { role: 'system', content: 'Answer in French.' },
    { role: 'user', content: 'Summarize.' },
  ],
  tools: [
    { name: 'get_weather', description: 'Weather now', input_schema: WEATHER_SCHEMA },
    { name: 'get_time', description: 'Time now', input_schema: TIME_SCHEMA },
  ],
  tool_choice: { type: 'any' },
  thinking: { type: 'adaptive' },
  output_config: { effort: 'high', format: { type: 'json_schema', schema: OUT_SCHEMA } },
  temperature: 0.5,
  top_p: 0.9,
  // The SDK's params no longer list the sampling fields; the API and older clients still send them.
} satisfies Anthropic.MessageCreateParamsNonStreaming & { temperature?: number; top_p?: number };

export const chatRequest = {
  model: 'gpt-x',
  max_completion_tokens: 1000,
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [
      { type: 'text', text: 'Look at these.' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' } },
    ] },
    { role: 'assistant', content: 'Calling tools.', tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ] },
    { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    { role: 'tool', tool_call_id: 'call_2', content: 'Error: 12:00' },
    { role: 'developer', content: 'Answer in French.' },
    { role: 'user', content: 'Summarize.' },
  ],
  tools: [
    { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: WEATHER_SCHEMA } },
    { type: 'function', function: { name: 'get_time', description: 'Time now', parameters: TIME_SCHEMA } },
  ],
  tool_choice: 'required',
  parallel_tool_calls: true,
  reasoning_effort: 'high',
  response_format: { type: 'json_schema', json_schema: { name: 'out', schema: OUT_SCHEMA, strict: true } },
  temperature: 0.5,
  top_p: 0.9,
} satisfies OpenAI.ChatCompletionCreateParamsNonStreaming;

export const responsesRequest = {
  model: 'gpt-x',
  instructions: 'Be brief.',
  max_output_tokens: 1000,
  input: [
    { role: 'user', content: [
      { type: 'input_text', text: 'Look at these.' },
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      { type: 'input_file', file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' },
    ] },
    { type: 'message', role: 'assistant', content: 'Calling tools.' },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{"tz":"CET"}' },
    { type: 'function_call_output', call_id: 'call_1', output: '18C' },
    { type: 'function_call_output', call_id: 'call_2', output: 'Error: 12:00' },
    { role: 'developer', content: 'Answer in French.' },
    { role: 'user', content: 'Summarize.' },
  ],
  tools: [
    { type: 'function', name: 'get_weather', description: 'Weather now', parameters: WEATHER_SCHEMA, strict: false },
    { type: 'function', name: 'get_time', description: 'Time now', parameters: TIME_SCHEMA, strict: false },
  ],
  tool_choice: 'required',
  parallel_tool_calls: true,
  reasoning: { effort: 'high', summary: 'auto' },
  text: { format: { type: 'json_schema', name: 'out', schema: OUT_SCHEMA, strict: true } },
  temperature: 0.5,
  top_p: 0.9,
  store: false,
} satisfies OpenAI.Responses.ResponseCreateParamsNonStreaming;

/** Gemini has no mid-conversation instructions: its clients send them once, in systemInstruction. */
export const geminiRequest = {
  systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'Look at these.' }, { inlineData: { mimeType: 'image/png', data: PNG } }, { inlineData: { mimeType: 'application/pdf', data: PDF } }] },
    { role: 'model', parts: [
      { text: 'Calling tools.' },
      { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } },
      { functionCall: { id: 'call_2', name: 'get_time', args: { tz: 'CET' } } },
    ] },
    { role: 'user', parts: [
      { functionResponse: { id: 'call_1', name: 'get_weather', response: { output: '18C' } } },
      { functionResponse: { id: 'call_2', name: 'get_time', response: { error: '12:00' } } },
      { text: 'Summarize.' },
    ] },
  ],
  tools: [{ functionDeclarations: [
    { name: 'get_weather', description: 'Weather now', parametersJsonSchema: WEATHER_SCHEMA },
    { name: 'get_time', description: 'Time now', parameters: { type: 'OBJECT', properties: { tz: { type: 'STRING' } }, required: ['tz'] } },
  ] }],
  toolConfig: { functionCallingConfig: { mode: 'ANY' } },
  generationConfig: {
    maxOutputTokens: 1000, temperature: 0.5, topP: 0.9,
    responseMimeType: 'application/json', responseJsonSchema: OUT_SCHEMA,
    thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true },
  },
};

export const REQUESTS = { messages: messagesRequest, chat: chatRequest, responses: responsesRequest, gemini: geminiRequest } as const;

// Answers: thinking, text, two parallel calls, stop for tools; usage 100 uncached + 20 cached (+5 written
// where the vendor reports writes) in, 50 out of which 10 thinking.
export const messagesAnswer = {
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x',
  content: [
    { type: 'thinking', thinking: 'Need both.', signature: 'sig-anthropic' },
    { type: 'text', text: 'Bonjour', citations: null },
    { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Lyon' } },
    { type: 'tool_use', id: 'call_b', name: 'get_time', input: { tz: 'UTC' } },
  ],
  stop_reason: 'tool_use', stop_sequence: null,
  usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 5, output_tokens: 50, output_tokens_details: { thinking_tokens: 10 } },
};

export const chatAnswer = {
  id: 'chatcmpl-1', object: 'chat.completion', created: 1700000000, model: 'gpt-x',
  choices: [{ index: 0, logprobs: null, finish_reason: 'tool_calls', message: {
    role: 'assistant', content: 'Bonjour', refusal: null,
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
    ],
  } }],
  usage: { prompt_tokens: 125, completion_tokens: 50, total_tokens: 175, prompt_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 10 } },
};

export const responsesAnswer = {
  id: 'resp_1', object: 'response', created_at: 1700000000, status: 'completed', model: 'gpt-x', error: null, incomplete_details: null,
  output: [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need both.' }], encrypted_content: 'enc-openai' },
    { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Bonjour', annotations: [] }] },
    { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Lyon"}' },
    { id: 'fc_2', type: 'function_call', status: 'completed', call_id: 'call_b', name: 'get_time', arguments: '{"tz":"UTC"}' },
  ],
  usage: { input_tokens: 125, input_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 175 },
};

export const geminiAnswer = {
  responseId: 'gem_1', modelVersion: 'gemini-x',
  candidates: [{ index: 0, finishReason: 'STOP', content: { role: 'model', parts: [
    { text: 'Need both.', thought: true, thoughtSignature: 'sig-google-thought' },
    { text: 'Bonjour' },
    { functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Lyon' } }, thoughtSignature: 'sig-google' },
    { functionCall: { id: 'call_b', name: 'get_time', args: { tz: 'UTC' } } },
  ] } }],
  usageMetadata: { promptTokenCount: 120, cachedContentTokenCount: 20, candidatesTokenCount: 40, thoughtsTokenCount: 10, totalTokenCount: 170 },
};

export const ANSWERS = { messages: messagesAnswer, chat: chatAnswer, responses: responsesAnswer, gemini: geminiAnswer } as const;
