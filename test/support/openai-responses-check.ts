// The request checks of the Responses fake (POST /v1/responses), field lists from openai@6.49
// (resources/responses/responses.d.ts: ResponseCreateParamsBase, ResponseInputItem, Tool,
// ResponseIncludable; shared.d.ts: Reasoning). The API's errors are {error: {message, type, param,
// code}}: an unknown body field is 400 "Unknown parameter: 'x'." (code unknown_parameter), a wrong type
// "Invalid type for 'x': expected ..." (invalid_type), a function_call_output with no function_call
// "No tool call found for function call output with call_id ..." and the reverse "No tool output found
// for function call ...". Item types the fake does not model (shell, MCP, computer calls...) are
// accepted by type, as replaying them from an earlier answer is legal.

export class OpenAIRefusal extends Error {
  constructor(readonly status: number, message: string, readonly param: string | null = null, readonly code: string | null = null, readonly type = 'invalid_request_error') {
    super(message);
  }
}
const bad = (message: string, param: string | null, code: string | null = 'invalid_value') => new OpenAIRefusal(400, message, param, code);

// client_metadata is not in the SDK's types; Codex sends it (codex-rs codex-api ResponsesApiRequest).
const FIELDS = ['client_metadata', 'background', 'context_management', 'conversation', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata', 'model', 'moderation', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning', 'safety_identifier', 'service_tier', 'store', 'stream', 'stream_options', 'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user'];
const TYPES: Record<string, string> = { background: 'boolean', parallel_tool_calls: 'boolean', store: 'boolean', stream: 'boolean', instructions: 'string', previous_response_id: 'string', prompt_cache_key: 'string', safety_identifier: 'string', user: 'string', model: 'string', temperature: 'number', top_p: 'number', max_output_tokens: 'integer', max_tool_calls: 'integer', top_logprobs: 'integer', include: 'array', tools: 'array', reasoning: 'object', text: 'object', metadata: 'object', client_metadata: 'object' };
const INCLUDABLE = ['file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs', 'reasoning.encrypted_content', 'message.output_text.logprobs'];
const OPAQUE_ITEMS = ['file_search_call', 'computer_call', 'computer_call_output', 'web_search_call', 'tool_search_call', 'tool_search_output', 'additional_tools', 'compaction', 'image_generation_call', 'code_interpreter_call', 'local_shell_call', 'local_shell_call_output', 'shell_call', 'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response', 'mcp_call', 'compaction_trigger', 'program', 'program_output'];
const HOSTED_TOOLS = ['file_search', 'computer', 'computer_use_preview', 'web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11', 'mcp', 'code_interpreter', 'programmatic_tool_calling', 'image_generation', 'local_shell', 'shell', 'namespace', 'tool_search', 'apply_patch'];
const PARTS = ['input_text', 'input_image', 'input_file', 'output_text', 'refusal'];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

function closed(object: Record<string, unknown>, required: string[], optional: string[], at: string) {
  for (const key of required) if (object[key] === undefined) throw bad(`Missing required parameter: '${at}.${key}'.`, `${at}.${key}`, 'missing_required_parameter');
  const extra = Object.keys(object).find((k) => !required.includes(k) && !optional.includes(k));
  if (extra) throw bad(`Unknown parameter: '${at}.${extra}'.`, `${at}.${extra}`, 'unknown_parameter');
}
const oneOf = (value: unknown, allowed: unknown[], at: string) => {
  if (value !== undefined && value !== null && !allowed.includes(value)) throw bad(`Invalid value: '${String(value)}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, at);
};

function message(item: any, at: string): string {
  closed(item, ['role', 'content'], ['type', 'id', 'status', 'phase'], at);
  oneOf(item.role, ['user', 'assistant', 'system', 'developer'], `${at}.role`);
  if (typeof item.content === 'string') return item.role === 'user' ? item.content : '';
  if (!Array.isArray(item.content)) throw bad(`Invalid type for '${at}.content': expected one of a string or array of input items.`, `${at}.content`, 'invalid_type');
  let text = '';
  item.content.forEach((part: any, k: number) => {
    oneOf(part?.type, PARTS, `${at}.content[${k}].type`);
    if (part?.type === undefined) throw bad(`Missing required parameter: '${at}.content[${k}].type'.`, `${at}.content[${k}].type`, 'missing_required_parameter');
    // Assistant turns replay output parts; everyone else sends input parts.
    if ((item.role === 'assistant') !== ['output_text', 'refusal'].includes(part.type)) throw bad(`Invalid value: '${part.type}'. Supported values are: ${item.role === 'assistant' ? "'output_text' and 'refusal'" : "'input_text', 'input_image', and 'input_file'"}.`, `${at}.content[${k}]`);
    if (['input_text', 'output_text'].includes(part.type) && typeof part.text !== 'string') throw bad(`Missing required parameter: '${at}.content[${k}].text'.`, `${at}.content[${k}].text`, 'missing_required_parameter');
    if (part.type === 'input_text' && item.role === 'user') text = part.text;
  });
  return text;
}

export interface Conversation {
  /** Items as the model sees them: a previous response's chain, then this input. */
  items: any[];
  lastUserText: string;
}

/** Checks an input list; `earlier` are the items of the previous_response_id chain. */
function input(body: any, earlier: any[], stored: (id: string) => boolean): Conversation {
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  if (!Array.isArray(items)) throw bad("Invalid type for 'input': expected one of a string or array of input items.", 'input', 'invalid_type');
  let lastUserText = '';
  items.forEach((item: any, i: number) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw bad(`Invalid type for '${at}': expected an object.`, at, 'invalid_type');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      const text = message(item, at);
      if (item.role === 'user') lastUserText = text;
    } else if (type === 'function_call') {
      closed(item, ['type', 'call_id', 'name', 'arguments'], ['id', 'status', 'namespace', 'caller'], at);
      if (typeof item.arguments !== 'string') throw bad(`Invalid type for '${at}.arguments': expected a string, but got ${kind(item.arguments)} instead.`, `${at}.arguments`, 'invalid_type');
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      closed(item, ['type', 'call_id', 'output'], ['id', 'status', 'caller'], at);
    } else if (type === 'custom_tool_call') {
      closed(item, ['type', 'call_id', 'name', 'input'], ['id', 'namespace', 'caller'], at);
    } else if (type === 'reasoning') {
      closed(item, ['type', 'summary'], ['id', 'content', 'encrypted_content', 'status'], at);
      if (!Array.isArray(item.summary)) throw bad(`Invalid type for '${at}.summary': expected an array.`, `${at}.summary`, 'invalid_type');
      // Without its encrypted content a reasoning item is only a reference to a stored one.
      if (typeof item.encrypted_content !== 'string' && !stored(item.id)) throw new OpenAIRefusal(404, `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, 'input');
    } else if (type === 'item_reference') {
      closed(item, ['type', 'id'], [], at);
      if (!stored(item.id)) throw new OpenAIRefusal(404, `Item with id '${item.id}' not found.`, 'input');
    } else if (!OPAQUE_ITEMS.includes(type)) {
      throw bad(`Invalid value: '${type}'. Supported values are: 'message', 'function_call', 'function_call_output', 'reasoning', 'custom_tool_call', 'custom_tool_call_output', 'item_reference', ${OPAQUE_ITEMS.map((t) => `'${t}'`).join(', ')}.`, `${at}.type`);
    }
  });
  const all = [...earlier, ...items];
  const calls = all.filter((it) => it.type === 'function_call' || it.type === 'custom_tool_call').map((it) => it.call_id);
  const outputs = all.filter((it) => it.type === 'function_call_output' || it.type === 'custom_tool_call_output').map((it) => it.call_id);
  const orphan = outputs.find((id) => !calls.includes(id));
  if (orphan) throw bad(`No tool call found for function call output with call_id ${orphan}.`, 'input', null);
  const unanswered = items.find((it: any) => (it.type === 'function_call' || it.type === 'custom_tool_call') && !outputs.includes(it.call_id));
  if (unanswered) throw bad(`No tool output found for function call ${unanswered.call_id}.`, 'input', null);
  return { items: all, lastUserText };
}

function tools(body: any) {
  body.tools.forEach((tool: any, i: number) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw bad(`Invalid type for '${at}': expected an object.`, at, 'invalid_type');
    if (tool.type === 'function') {
      closed(tool, ['type', 'name'], ['parameters', 'strict', 'description', 'defer_loading', 'allowed_callers', 'output_schema'], at);
      if (tool.parameters != null && !isObject(tool.parameters)) throw bad(`Invalid type for '${at}.parameters': expected an object.`, `${at}.parameters`, 'invalid_type');
    } else if (tool.type === 'custom') {
      closed(tool, ['type', 'name'], ['description', 'format', 'defer_loading', 'allowed_callers'], at);
    } else oneOf(tool.type, ['function', 'custom', ...HOSTED_TOOLS], `${at}.type`);
    if (['function', 'custom'].includes(tool.type) && !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) throw bad(`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `${at}.name`, 'invalid_value');
  });
}

/** Checks a create body the way the API does (before the model lookup). */
export function checkResponses(body: any, earlier: any[], stored: (id: string) => boolean): Conversation {
  if (!isObject(body)) throw bad('We could not parse the JSON body of your request.', null, null);
  const unknown = Object.keys(body).find((k) => !FIELDS.includes(k));
  if (unknown) throw bad(`Unknown parameter: '${unknown}'.`, unknown, 'unknown_parameter');
  for (const [field, want] of Object.entries(TYPES)) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (want === 'number' ? typeof value !== 'number' : want === 'object' ? !isObject(value) : kind(value) !== want) throw bad(`Invalid type for '${field}': expected ${want === 'integer' ? 'an' : 'a'} ${want}, but got ${kind(value)} instead.`, field, 'invalid_type');
  }
  if (body.model === undefined && body.prompt === undefined) throw bad("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (body.temperature != null && !(body.temperature >= 0 && body.temperature <= 2)) throw bad(`Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${body.temperature} instead.`, 'temperature', 'decimal_above_max_value');
  if (body.top_p != null && !(body.top_p >= 0 && body.top_p <= 1)) throw bad(`Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got ${body.top_p} instead.`, 'top_p', 'decimal_above_max_value');
  if (body.max_output_tokens != null && body.max_output_tokens < 16) throw bad(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${body.max_output_tokens} instead.`, 'max_output_tokens', 'integer_below_min_value');
  (body.include ?? []).forEach((value: unknown, i: number) => oneOf(value, INCLUDABLE, `include[${i}]`));
  if (body.stream_options != null && body.stream !== true) throw bad("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  if (body.reasoning != null) {
    closed(body.reasoning, [], ['effort', 'summary', 'generate_summary', 'context', 'mode'], 'reasoning');
    oneOf(body.reasoning.effort, ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'], 'reasoning.effort');
    oneOf(body.reasoning.summary, ['auto', 'concise', 'detailed'], 'reasoning.summary');
  }
  if (body.text != null) {
    closed(body.text, [], ['format', 'verbosity'], 'text');
    oneOf(body.text.verbosity, ['low', 'medium', 'high'], 'text.verbosity');
    oneOf(body.text.format?.type, ['text', 'json_object', 'json_schema'], 'text.format.type');
  }
  if (body.tools != null) tools(body);
  const choice = body.tool_choice;
  if (typeof choice === 'string') oneOf(choice, ['none', 'auto', 'required'], 'tool_choice');
  else if (choice != null && !isObject(choice)) throw bad("Invalid type for 'tool_choice': expected one of a string or an object.", 'tool_choice', 'invalid_type');
  if (isObject(choice) && ['function', 'custom'].includes(choice.type) && !(body.tools ?? []).some((t: any) => t.name === choice.name)) throw bad(`Tool choice '${choice.type}' not found in 'tools' parameter.`, 'tool_choice');
  return input(body, earlier, stored);
}
