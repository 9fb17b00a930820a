// The request checks of the messages fake, field lists from @anthropic-ai/sdk 1.12
// (resources/messages/messages.d.ts: MessageCreateParamsBase, MessageParam incl. SystemMessageParam,
// ContentBlockParam, ToolUnion, ToolChoice, ThinkingConfigParam, OutputConfig, CacheControlEphemeral;
// context_management from resources/beta). The vendor validates with pydantic: errors name the path
// (`messages.0.content.1.tool_use.id: Field required`) and an unknown key is "Extra inputs are not
// permitted". Blocks the fake does not model in detail (server tool results, container uploads) are
// accepted by type, as replaying them from an earlier answer is legal.

export class Refusal extends Error {
  constructor(readonly status: number, readonly type: string, message: string) {
    super(message);
  }
}
export const invalid = (message: string) => new Refusal(400, 'invalid_request_error', message);

// Temperature, top_k and top_p left the SDK's types but the API still takes them; the last five are
// the beta client's (resources/beta/messages: BetaMessageCreateParamsBase).
export const FIELDS = ['model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_k', 'top_p', 'tools', 'tool_choice', 'thinking', 'service_tier', 'container', 'mcp_servers', 'context_management', 'cache_control', 'diagnostics', 'inference_geo', 'output_config', 'speed', 'user_profile_id', 'workspace_id', 'output_format', 'billing_policy', 'compaction', 'fallback_credit_token', 'fallbacks', 'thread'];

const BLOCKS: Record<string, { required: string[]; optional: string[] }> = {
  text: { required: ['text'], optional: ['cache_control', 'citations'] },
  image: { required: ['source'], optional: ['cache_control', 'transformations'] },
  document: { required: ['source'], optional: ['cache_control', 'citations', 'context', 'title'] },
  search_result: { required: ['content', 'source', 'title'], optional: ['cache_control', 'citations'] },
  thinking: { required: ['thinking', 'signature'], optional: [] },
  redacted_thinking: { required: ['data'], optional: [] },
  tool_use: { required: ['id', 'name', 'input'], optional: ['cache_control', 'caller', 'toolset_name'] },
  tool_result: { required: ['tool_use_id'], optional: ['cache_control', 'content', 'is_error', 'toolset_name'] },
};
// Replayed server-side blocks: their inner shapes are the vendor's own output.
const OPAQUE = new Set(['server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', 'tool_search_tool_result', 'container_upload', 'tool_reference', 'advisor_tool_result', 'compaction', 'fallback', 'mcp_tool_listing', 'mcp_tool_result', 'mcp_tool_use', 'tool_addition', 'tool_removal']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const CUSTOM_TOOL = ['name', 'input_schema', 'description', 'cache_control', 'type', 'allowed_callers', 'defer_loading', 'eager_input_streaming', 'input_examples', 'strict'];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function closed(object: Record<string, unknown>, required: string[], optional: string[], at: string) {
  for (const key of required) if (object[key] === undefined) throw invalid(`${at}.${key}: Field required`);
  const extra = Object.keys(object).find((k) => k !== 'type' && !required.includes(k) && !optional.includes(k));
  if (extra) throw invalid(`${at}.${extra}: Extra inputs are not permitted`);
}

/** Counts the cache breakpoints it sees (the API takes at most 4). */
function cacheControl(value: unknown, at: string, seen: { count: number }) {
  if (value === undefined || value === null) return;
  if (!isObject(value) || value.type !== 'ephemeral') throw invalid(`${at}.cache_control.type: Input should be 'ephemeral'`);
  closed(value, [], ['ttl'], `${at}.cache_control`);
  if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') throw invalid(`${at}.cache_control.ttl: Input should be '5m' or '1h'`);
  seen.count++;
}

function block(b: any, at: string, seen: { count: number }) {
  if (!isObject(b) || typeof b.type !== 'string') throw invalid(`${at}: Input should be a valid dictionary or object to extract fields from`);
  if (OPAQUE.has(b.type)) return cacheControl(b.cache_control, at, seen);
  const shape = BLOCKS[b.type];
  if (!shape) throw invalid(`${at}: Input tag '${b.type}' found using 'type' does not match any of the expected tags: ${[...Object.keys(BLOCKS), ...OPAQUE].map((t) => `'${t}'`).join(', ')}`);
  const here = `${at}.${b.type}`;
  closed(b, shape.required, shape.optional, here);
  cacheControl(b.cache_control, here, seen);
  for (const key of ['text', 'thinking', 'signature', 'data', 'id', 'name', 'tool_use_id']) if (b[key] !== undefined && shape.required.includes(key) && typeof b[key] !== 'string') throw invalid(`${here}.${key}: Input should be a valid string`);
  if (b.type === 'image' && !(isObject(b.source) && ['base64', 'url', 'file'].includes(b.source.type))) throw invalid(`${here}.source: Input tag '${b.source?.type}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`);
  if (b.type === 'image' && b.source.type === 'base64' && !(typeof b.source.data === 'string' && typeof b.source.media_type === 'string')) throw invalid(`${here}.source.base64.data: Field required`);
  if (b.type === 'document' && !(isObject(b.source) && ['base64', 'text', 'content', 'url', 'file'].includes(b.source.type))) throw invalid(`${here}.source: Input tag '${b.source?.type}' found using 'type' does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'`);
  if (b.type === 'tool_use' && !isObject(b.input)) throw invalid(`${here}.input: Input should be a valid dictionary`);
  if (b.type === 'tool_result' && b.content !== undefined && typeof b.content !== 'string') {
    if (!Array.isArray(b.content)) throw invalid(`${here}.content: Input should be a valid string or list`);
    b.content.forEach((inner: any, k: number) => {
      if (!['text', 'image', 'document', 'search_result', 'tool_reference'].includes(inner?.type)) throw invalid(`${here}.content.${k}: Input tag '${inner?.type}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document', 'tool_reference'`);
      block(inner, `${here}.content.${k}`, seen);
    });
  }
}

function tools(body: any, seen: { count: number }) {
  if (!Array.isArray(body.tools)) throw invalid('tools: Input should be a valid list');
  const names = new Set<string>();
  body.tools.forEach((tool: any, i: number) => {
    if (!isObject(tool)) throw invalid(`tools.${i}: Input should be a valid dictionary`);
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    // Server tools are typed by a dated name (web_search_20250305, bash_20250124, ...).
    if (!custom && !/^[a-z_]+_\d{8}$/.test(String(tool.type))) throw invalid(`tools.${i}: Input tag '${tool.type}' found using 'type' does not match any of the expected tags`);
    const at = `tools.${i}.${custom ? 'custom' : tool.type}`;
    if (custom) {
      closed(tool, ['name', 'input_schema'], CUSTOM_TOOL, at);
      if (!isObject(tool.input_schema) || tool.input_schema.type !== 'object') throw invalid(`${at}.input_schema.type: Input should be 'object'`);
      if (tool.description !== undefined && typeof tool.description !== 'string') throw invalid(`${at}.description: Input should be a valid string`);
    } else if (typeof tool.name !== 'string') throw invalid(`${at}.name: Field required`);
    if (!TOOL_NAME.test(tool.name)) throw invalid(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    if (names.has(tool.name)) throw invalid('tools: Tool names must be unique.');
    names.add(tool.name);
    cacheControl(tool.cache_control, at, seen);
  });
  return names;
}

// What each real model takes of thinking (Anthropic's adaptive-thinking and effort pages; the
// refusal of a budget is the API's own message, the other two are worded here). Models not listed
// (the fakes' own names) take everything.
const BUDGET_ONLY = ['claude-3-', 'claude-sonnet-4-20250514', 'claude-opus-4-20250514', 'claude-opus-4-1', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-5'];
const ADAPTIVE_ONLY = ['claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5', 'claude-sonnet-5'];
/** Effort came with Opus 4.5: the budget-only models before it refuse output_config.effort. */
const TAKES_EFFORT = ['claude-opus-4-5'];
const listed = (list: string[], model: string) => list.some((id) => model.startsWith(id));

function modelThinking(body: any) {
  const model = String(body.model);
  const type = body.thinking?.type;
  if (type === 'adaptive' && listed(BUDGET_ONLY, model)) throw invalid(`adaptive thinking is not supported on ${model}; use thinking.type.enabled with budget_tokens`);
  if (type === 'enabled' && listed(ADAPTIVE_ONLY, model)) throw invalid('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.');
  if (body.output_config?.effort != null && listed(BUDGET_ONLY, model) && !listed(TAKES_EFFORT, model)) throw invalid(`output_config.effort: effort is not supported on ${model}`);
}

function settings(body: any, toolNames: Set<string>) {
  modelThinking(body);
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(choice.type)) throw invalid(`tool_choice: Input tag '${choice?.type}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`);
    closed(choice, choice.type === 'tool' ? ['name'] : [], choice.type === 'none' ? [] : ['disable_parallel_tool_use'], `tool_choice.${choice.type}`);
    if (choice.type === 'tool' && !toolNames.has(choice.name)) throw invalid(`tool_choice: Tool '${choice.name}' not found in tools`);
  }
  const thinking = body.thinking;
  if (thinking !== undefined) {
    if (!isObject(thinking) || !['enabled', 'disabled', 'adaptive', 'between_tools'].includes(thinking.type)) throw invalid(`thinking: Input tag '${thinking?.type}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'`);
    closed(thinking, thinking.type === 'enabled' ? ['budget_tokens'] : [], ['enabled', 'adaptive'].includes(thinking.type) ? ['display'] : [], `thinking.${thinking.type}`);
    if (thinking.type === 'enabled') {
      if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024) throw invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (thinking.budget_tokens >= body.max_tokens) throw invalid('`max_tokens` must be greater than `thinking.budget_tokens`.');
    }
  }
  const output = body.output_config;
  if (output !== undefined) {
    if (!isObject(output)) throw invalid('output_config: Input should be a valid dictionary');
    closed(output, [], ['effort', 'format', 'task_budget'], 'output_config');
    if (output.effort != null && !['low', 'medium', 'high', 'xhigh', 'max'].includes(output.effort)) throw invalid("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'");
    if (output.format != null && !(isObject(output.format) && output.format.type === 'json_schema' && isObject(output.format.schema))) throw invalid('output_config.format: a json_schema format with a schema is expected');
  }
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw invalid('metadata: Input should be a valid dictionary');
    closed(body.metadata, [], ['user_id'], 'metadata');
  }
  if (body.context_management != null && !(isObject(body.context_management) && (body.context_management.edits === undefined || Array.isArray(body.context_management.edits)))) throw invalid('context_management.edits: Input should be a valid list');
}

/** Checks a body as the vendor does; answers the last user text (what the fake echoes). */
export function checkMessages(body: any, models: string[]): string {
  if (!isObject(body)) throw invalid('Input should be a valid dictionary');
  const unknown = Object.keys(body).find((k) => !FIELDS.includes(k));
  if (unknown) throw invalid(`${unknown}: Extra inputs are not permitted`);
  for (const field of ['model', 'messages', 'max_tokens']) if (body[field] === undefined) throw invalid(`${field}: Field required`);
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw invalid('max_tokens: Input should be a valid integer greater than 0');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid('messages: at least one message is required');
  const seen = { count: 0 };
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) throw invalid('system: Input should be a valid string or list');
    body.system.forEach((b: any, i: number) => {
      if (b?.type !== 'text') throw invalid(`system.${i}.type: Input should be 'text'`);
      block(b, `system.${i}`, seen);
    });
  }
  let text = '';
  let pendingToolUses: string[] = [];
  body.messages.forEach((m: any, i: number) => {
    if (!isObject(m)) throw invalid(`messages.${i}: Input should be a valid dictionary`);
    if (!['user', 'assistant', 'system'].includes(m.role)) throw invalid(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`);
    closed(m, ['role', 'content'], [], `messages.${i}`);
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks)) throw invalid(`messages.${i}.content: Input should be a valid list`);
    const results: string[] = [];
    blocks.forEach((b: any, j: number) => {
      block(b, `messages.${i}.content.${j}`, seen);
      if (m.role === 'system' && b.type !== 'text') throw invalid(`messages.${i}.content.${j}.type: Input should be 'text'`);
      if (b.type === 'tool_result') results.push(b.tool_use_id);
      if (b.type === 'text' && m.role === 'user') text = b.text;
    });
    // Each tool_use must be answered by a tool_result in the very next message, and only then.
    const missing = pendingToolUses.filter((id) => !results.includes(id));
    if (pendingToolUses.length && missing.length) throw invalid(`messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
    const stray = results.filter((id) => !pendingToolUses.includes(id));
    if (stray.length) throw invalid(`messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
    pendingToolUses = m.role === 'assistant' ? blocks.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id) : [];
  });
  // With thinking on, the assistant turn being continued (tool_use then tool_result) starts with thinking.
  const lastAssistant = body.messages.map((m: any, i: number) => [m, i] as const).filter(([m]: any) => m.role === 'assistant').at(-1);
  if (body.thinking?.type === 'enabled' && lastAssistant && Array.isArray(lastAssistant[0].content) && lastAssistant[0].content.some((b: any) => b.type === 'tool_use') && !['thinking', 'redacted_thinking'].includes(lastAssistant[0].content[0].type)) {
    throw invalid(`messages.${lastAssistant[1]}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${lastAssistant[0].content[0].type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`);
  }
  const toolNames = body.tools === undefined ? new Set<string>() : tools(body, seen);
  settings(body, toolNames);
  cacheControl(body.cache_control, 'request', { count: 0 });
  if (seen.count > 4) throw invalid(`A maximum of 4 blocks with cache_control may be provided. Found ${seen.count}.`);
  for (const field of ['temperature', 'top_p']) if (body[field] !== undefined && !(body[field] >= 0 && body[field] <= 1)) throw invalid(`${field}: Input should be less than or equal to 1`);
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s: unknown) => typeof s === 'string'))) throw invalid('stop_sequences: Input should be a valid list');
  if (!models.includes(body.model)) throw new Refusal(404, 'not_found_error', `model: ${body.model}`);
  return text;
}
