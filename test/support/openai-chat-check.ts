import { OpenAIRefusal as Refusal } from './openai-responses-check.ts';

// The request checks of the chat-completions fake, from openai@6.49
// (resources/chat/completions/completions.d.ts: ChatCompletionCreateParamsBase, the message params,
// ChatCompletionTool, ChatCompletionMessageToolCall) and the API's errors:
// - an unknown body field: 400 "Unrecognized request argument supplied: <name>";
// - `model` and `messages` required (missing_required_parameter); roles system, developer, user,
//   assistant, tool; content a string, null (assistant with tool_calls) or typed parts;
// - tool messages need tool_call_id and must answer the tool_calls of the assistant message before
//   them, which must all be answered ("...did not have response messages: <ids>");
// - tools are {type: function, function: {name, ...}} or {type: custom, custom: {name, ...}};
// - `stream_options` only with `stream: true`; temperature 0-2, top_p 0-1; an unknown model is 404;
// - a model that does not reason (the gpt-4 and gpt-3.5 families) refuses `reasoning_effort`, even `none`.

const FIELDS = new Set(['messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options']);
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const USER_PARTS = ['text', 'image_url', 'input_audio', 'file'];

function parts(content: unknown, allowed: string[]): boolean {
  return Array.isArray(content) && content.every((p: any) => allowed.includes(p?.type) && (p.type !== 'text' || typeof p.text === 'string') && (p.type !== 'image_url' || typeof p.image_url?.url === 'string') && (p.type !== 'refusal' || typeof p.refusal === 'string'));
}

function messages(body: any): void {
  let pending: string[] = [];
  body.messages.forEach((m: any, i: number) => {
    if (!ROLES.has(m?.role)) throw new Refusal(400, `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`, `messages[${i}].role`, 'invalid_value');
    const content = m.content;
    const ok =
      typeof content === 'string' ||
      (m.role === 'assistant' && (content === null || content === undefined ? Boolean(m.tool_calls) || content === null : parts(content, ['text', 'refusal']))) ||
      (m.role === 'user' && parts(content, USER_PARTS)) ||
      (['system', 'developer', 'tool'].includes(m.role) && parts(content, ['text']));
    if (!ok) throw new Refusal(400, `Invalid value for 'messages[${i}].content'.`, `messages[${i}].content`, 'invalid_type');
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string') throw new Refusal(400, `Missing required parameter: 'messages[${i}].tool_call_id'.`, `messages[${i}].tool_call_id`, 'missing_required_parameter');
      if (!pending.includes(m.tool_call_id)) throw new Refusal(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`, null);
      pending = pending.filter((id) => id !== m.tool_call_id);
      return;
    }
    if (pending.length) throw new Refusal(400, `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`, 'messages', null);
    if (m.role === 'assistant' && m.tool_calls !== undefined) {
      if (!Array.isArray(m.tool_calls)) throw new Refusal(400, `Invalid type for 'messages[${i}].tool_calls': expected an array.`, `messages[${i}].tool_calls`, 'invalid_type');
      m.tool_calls.forEach((call: any, k: number) => {
        const at = `messages[${i}].tool_calls[${k}]`;
        const fn = call?.type === 'function' ? call.function : call?.type === 'custom' ? call.custom : undefined;
        if (typeof call?.id !== 'string' || !fn || typeof fn.name !== 'string' || typeof (call.type === 'function' ? fn.arguments : fn.input) !== 'string') throw new Refusal(400, `Invalid value for '${at}'.`, at, 'invalid_value');
      });
      pending = m.tool_calls.map((call: any) => call.id);
    }
  });
  if (pending.length) throw new Refusal(400, `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`, 'messages', null);
}

function tools(body: any): void {
  if (!Array.isArray(body.tools)) throw new Refusal(400, "Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
  body.tools.forEach((tool: any, i: number) => {
    const inner = tool?.type === 'function' ? tool.function : tool?.type === 'custom' ? tool.custom : undefined;
    if (!inner) throw new Refusal(400, `Invalid value: '${tool?.type}'. Supported values are: 'function' and 'custom'.`, `tools[${i}].type`, 'invalid_value');
    if (typeof inner.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(inner.name)) throw new Refusal(400, `Invalid 'tools[${i}].${tool.type}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `tools[${i}].${tool.type}.name`, 'invalid_value');
  });
}

export function checkChat(body: any, models: string[]): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, 'We could not parse the JSON body of your request.');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown) throw new Refusal(400, `Unrecognized request argument supplied: ${unknown}`);
  for (const field of ['model', 'messages']) if (body[field] === undefined) throw new Refusal(400, `Missing required parameter: '${field}'.`, field, 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new Refusal(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages', 'empty_array');
  messages(body);
  if (body.tools !== undefined) tools(body);
  const choice = body.tool_choice;
  if (typeof choice === 'string' && !['none', 'auto', 'required'].includes(choice)) throw new Refusal(400, `Invalid value: '${choice}'. Supported values are: 'none', 'auto', and 'required'.`, 'tool_choice', 'invalid_value');
  if (choice !== undefined && body.tools === undefined && choice !== 'none') throw new Refusal(400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice', null);
  // The API types these `| null` and takes null as not set.
  if (body.stream_options != null && body.stream !== true) throw new Refusal(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value');
  for (const [field, max] of [['temperature', 2], ['top_p', 1]] as const) {
    if (body[field] != null && !(typeof body[field] === 'number' && body[field] >= 0 && body[field] <= max)) throw new Refusal(400, `Invalid '${field}': decimal between 0 and ${max} expected.`, field, 'decimal_out_of_range');
  }
  for (const field of ['max_tokens', 'max_completion_tokens']) if (body[field] != null && !Number.isInteger(body[field])) throw new Refusal(400, `Invalid type for '${field}': expected an integer.`, field, 'invalid_type');
  if (!models.includes(body.model)) throw new Refusal(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, null, 'model_not_found');
  if (body.reasoning_effort != null && /^gpt-(4|3\.5)/.test(body.model)) throw new Refusal(400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", 'reasoning_effort', 'unsupported_parameter');
}
