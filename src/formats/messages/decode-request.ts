// A messages API body (Anthropic) into the neutral request.
import {
  arr, InvalidTextField, isObject, obj, optBool, optNum, optStr, optStrings, str, unknownType, unwrapOpaque, UntranslatableField,
  type ContentPart, type HostedTool, type Json, type MediaSource, type ToolResultContent, type TextMessage, type TextRequest, type ThinkingSettings, type ToolChoice, type Untranslatable,
} from '../../core/text/index.ts';

type Cache = { ttl?: '5m' | '1h' };

const cacheOf = (b: Json): { cache?: Cache } => {
  if (!isObject(b.cache_control)) return {};
  const ttl = b.cache_control.ttl;
  return { cache: ttl === '5m' || ttl === '1h' ? { ttl } : {} };
};

const mediaSource = (v: unknown, field: string): MediaSource => {
  const s = obj(v, field);
  if (s.type === 'base64') return { kind: 'base64', mediaType: str(s.media_type, `${field}.media_type`), data: str(s.data, `${field}.data`) };
  if (s.type === 'url') return { kind: 'url', url: str(s.url, `${field}.url`) };
  if (s.type === 'file') return { kind: 'file', fileId: str(s.file_id, `${field}.file_id`), format: 'messages' };
  if (s.type === 'text') return { kind: 'base64', mediaType: 'text/plain', data: Buffer.from(str(s.data, `${field}.data`)).toString('base64') };
  throw new UntranslatableField(`${field}.type`, `source type ${JSON.stringify(s.type)} has no counterpart in the upstream format`);
};

/**
 * One content block; a kind only the messages API has (a server tool's blocks the vendor wrote into the
 * history, ...) is noted in `left` and left out: a messages upstream gets it in the body as it came.
 */
export const decodeBlock = (v: unknown, field: string, left: Untranslatable[]): ContentPart | undefined => {
  const b = obj(v, field);
  switch (b.type) {
    case 'text':
      return { type: 'text', text: str(b.text, `${field}.text`), ...cacheOf(b) };
    case 'image':
      return { type: 'image', source: mediaSource(b.source, `${field}.source`), ...cacheOf(b) };
    case 'document': {
      const title = optStr(b.title, `${field}.title`);
      return { type: 'document', source: mediaSource(b.source, `${field}.source`), ...(title ? { title } : {}), ...cacheOf(b) };
    }
    case 'thinking':
      return { type: 'thinking', text: str(b.thinking, `${field}.thinking`), signature: unwrapOpaque(str(b.signature, `${field}.signature`), 'messages') };
    case 'redacted_thinking':
      return { type: 'thinking', text: '', redacted: true, signature: unwrapOpaque(str(b.data, `${field}.data`), 'messages') };
    case 'tool_use':
      return { type: 'tool_call', id: str(b.id, `${field}.id`), name: str(b.name, `${field}.name`), arguments: JSON.stringify(b.input ?? {}), ...cacheOf(b) };
    case 'tool_result': {
      const content =
        b.content === undefined || typeof b.content === 'string'
          ? [{ type: 'text' as const, text: (b.content as string | undefined) ?? '' }].filter((p) => p.text !== '')
          : arr(b.content, `${field}.content`).flatMap((c, i) => {
              // Checked before decoding, so results nested in results cannot recurse.
              const type = obj(c, `${field}.content[${i}]`).type;
              if (type !== 'text' && type !== 'image' && type !== 'document') {
                if (typeof type !== 'string') throw unknownType(`${field}.content[${i}].type`, type);
                left.push({ field: `${field}.content[${i}].type`, reason: `${type} blocks in a tool result have no counterpart in other formats` });
                return [];
              }
              return [decodeBlock(c, `${field}.content[${i}]`, left) as ToolResultContent];
            });
      return { type: 'tool_result', callId: str(b.tool_use_id, `${field}.tool_use_id`), content, ...(b.is_error === true ? { isError: true } : {}), ...cacheOf(b) };
    }
    default:
      if (typeof b.type !== 'string') throw unknownType(`${field}.type`, b.type);
      left.push({ field: `${field}.type`, reason: `${b.type} blocks have no counterpart in other formats` });
      return undefined;
  }
};

const decodeContent = (v: unknown, field: string, left: Untranslatable[]): ContentPart[] =>
  typeof v === 'string' ? [{ type: 'text', text: v }] : arr(v, field).flatMap((b, i) => decodeBlock(b, `${field}[${i}]`, left) ?? []);

const decodeToolChoice = (v: unknown): { choice?: ToolChoice; parallel?: boolean } => {
  if (v === undefined) return {};
  const c = obj(v, 'tool_choice');
  const parallel = c.disable_parallel_tool_use === true ? { parallel: false } : {};
  if (c.type === 'auto') return { choice: { type: 'auto' }, ...parallel };
  if (c.type === 'any') return { choice: { type: 'required' }, ...parallel };
  if (c.type === 'none') return { choice: { type: 'none' } };
  if (c.type === 'tool') return { choice: { type: 'tool', name: str(c.name, 'tool_choice.name') }, ...parallel };
  throw unknownType('tool_choice.type', c.type);
};

const decodeThinking = (body: Json): ThinkingSettings | undefined => {
  const out = isObject(body.output_config) ? body.output_config : {};
  const effort = optStr(out.effort, 'output_config.effort') as ThinkingSettings['effort'];
  if (body.thinking === undefined) return effort ? { mode: 'adaptive', effort } : undefined;
  const t = obj(body.thinking, 'thinking');
  const display = t.display === 'omitted' ? { includeThoughts: false } : t.display === 'summarized' ? { includeThoughts: true } : {};
  const withEffort = effort ? { effort } : {};
  if (t.type === 'enabled') return { mode: 'enabled', budgetTokens: optNum(t.budget_tokens, 'thinking.budget_tokens'), ...withEffort, ...display };
  if (t.type === 'adaptive' || t.type === 'between_tools') return { mode: 'adaptive', ...withEffort, ...display };
  // Off is the messages API's default, and so it is the target's default: OpenAI's `none` and
  // Gemini's zero budget are refused by most of their models (a non-reasoning model takes no
  // effort at all; Gemini's Pro models always think), and Claude Code sends it on its side calls.
  if (t.type === 'disabled') return undefined;
  throw unknownType('thinking.type', t.type);
};

export const decodeRequest = (input: unknown): TextRequest => {
  const body = obj(input, 'body');
  const messages: TextMessage[] = [];
  const left: Untranslatable[] = [];
  if (body.system !== undefined) {
    const system = decodeContent(body.system, 'system', left);
    if (system.length) messages.push({ role: 'system', content: system });
  }
  arr(body.messages, 'messages').forEach((m, i) => {
    const msg = obj(m, `messages[${i}]`);
    if (msg.role !== 'user' && msg.role !== 'assistant' && msg.role !== 'system')
      throw new InvalidTextField(`messages[${i}].role`, 'must be user, assistant or system');
    messages.push({ role: msg.role, content: decodeContent(msg.content, `messages[${i}].content`, left) });
  });
  // Tools of Anthropic's own (typed: web_search_20250305, bash_20250124, ...) are kept as they came:
  // a messages upstream gets them, a translation refuses them (formats/index.ts).
  const hostedTools: HostedTool[] = [];
  const tools = body.tools === undefined ? undefined : arr(body.tools, 'tools').flatMap((t, i) => {
    const tool = obj(t, `tools[${i}]`);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      hostedTools.push({ format: 'messages', tool, field: `tools[${i}]`, reason: `the ${String(tool.type)} tool runs on Anthropic's servers and has no counterpart in the upstream format` });
      return [];
    }
    const strict = optBool(tool.strict, `tools[${i}].strict`);
    return [{
      name: str(tool.name, `tools[${i}].name`),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: obj(tool.input_schema, `tools[${i}].input_schema`),
      ...(strict !== undefined ? { strict } : {}),
    }];
  });
  const { choice, parallel } = decodeToolChoice(body.tool_choice);
  const format = isObject(body.output_config) && isObject(body.output_config.format) ? body.output_config.format : undefined;
  const meta = isObject(body.metadata) ? body.metadata : {};
  const req: TextRequest = {
    model: str(body.model, 'model'),
    messages,
    tools,
    hostedTools: hostedTools.length > 0 ? hostedTools : undefined,
    untranslatable: left.length > 0 ? left : undefined,
    toolChoice: choice,
    parallelToolCalls: parallel,
    thinking: decodeThinking(body),
    output: format ? { type: 'json_schema', schema: obj(format.schema, 'output_config.format.schema') } : undefined,
    maxOutputTokens: optNum(body.max_tokens, 'max_tokens'),
    temperature: optNum(body.temperature, 'temperature'),
    topP: optNum(body.top_p, 'top_p'),
    topK: optNum(body.top_k, 'top_k'),
    stop: optStrings(body.stop_sequences, 'stop_sequences'),
    stream: optBool(body.stream, 'stream'),
    user: optStr(meta.user_id, 'metadata.user_id'),
  };
  for (const k of Object.keys(req) as Array<keyof TextRequest>) if (req[k] === undefined) delete req[k];
  return req;
};
