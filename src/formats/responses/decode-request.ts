// A Responses API body (OpenAI `/v1/responses`) into the neutral request.
import {
  arr, CUSTOM_TOOL_PARAMETERS, customArguments, InvalidTextField, isObject, obj, optBool, optNum, optStr, pushPart, sourceFromUrl, str, unknownType, unwrapOpaque, UntranslatableField,
  type ContentPart, type HostedTool, type OutputFormat, type TextMessage, type TextRequest, type ToolChoice, type ToolDefinition, type ToolResultContent, type Untranslatable,
} from '../../core/text/index.ts';
import { decodeOutputFormat, thinkingForEffort } from '../openai-shared.ts';

/** One input content part (input_text, input_image, input_file; output_text and refusal in assistant history). */
const inputPart = (v: unknown, f: string): ToolResultContent => {
  const p = obj(v, f);
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: str(p.text, `${f}.text`) };
    case 'refusal':
      return { type: 'text', text: str(p.refusal, `${f}.refusal`) };
    case 'input_image': {
      const detail = optStr(p.detail, `${f}.detail`) as 'auto' | 'low' | 'high' | 'original' | undefined;
      const source = typeof p.file_id === 'string' ? { kind: 'file' as const, fileId: p.file_id, format: 'responses' as const } : sourceFromUrl(str(p.image_url, `${f}.image_url`));
      return { type: 'image', source, ...(detail ? { detail } : {}) };
    }
    case 'input_file': {
      const filename = optStr(p.filename, `${f}.filename`);
      const named = filename ? { filename } : {};
      if (typeof p.file_id === 'string') return { type: 'document', source: { kind: 'file', fileId: p.file_id, format: 'responses' }, ...named };
      if (typeof p.file_url === 'string') return { type: 'document', source: { kind: 'url', url: p.file_url }, ...named };
      const data = str(p.file_data, `${f}.file_data`);
      const s = sourceFromUrl(data, 'application/pdf');
      return { type: 'document', source: s.kind === 'url' ? { kind: 'base64', mediaType: 'application/pdf', data } : s, ...named };
    }
    default:
      throw unknownType(`${f}.type`, p.type);
  }
};

const content = (v: unknown, f: string): ToolResultContent[] =>
  typeof v === 'string' ? [{ type: 'text', text: v }] : arr(v, f).map((p, i) => inputPart(p, `${f}[${i}]`));

/**
 * One input item into the conversation; a kind only the Responses API has (a hosted tool's call, an
 * item reference, ...) is noted in `left` and left out: an OpenAI upstream gets it in the body as it came.
 */
const decodeItem = (messages: TextMessage[], v: unknown, i: number, left: Untranslatable[]): void => {
  const f = `input[${i}]`;
  const item = obj(v, f);
  const type = item.type ?? 'message';
  if (type === 'message') {
    const role = item.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') throw new InvalidTextField(`${f}.role`, 'must be user, assistant, system or developer');
    const parts: ContentPart[] = content(item.content, `${f}.content`);
    for (const p of parts) pushPart(messages, role, p);
    return;
  }
  if (type === 'function_call') {
    pushPart(messages, 'assistant', { type: 'tool_call', id: str(item.call_id, `${f}.call_id`), name: str(item.name, `${f}.name`), arguments: str(item.arguments, `${f}.arguments`) });
    return;
  }
  if (type === 'custom_tool_call') {
    pushPart(messages, 'assistant', { type: 'tool_call', id: str(item.call_id, `${f}.call_id`), name: str(item.name, `${f}.name`), arguments: customArguments(str(item.input, `${f}.input`)), custom: true });
    return;
  }
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    pushPart(messages, 'user', { type: 'tool_result', callId: str(item.call_id, `${f}.call_id`), content: content(item.output, `${f}.output`) });
    return;
  }
  if (type === 'reasoning') {
    const summary = Array.isArray(item.summary) ? item.summary : [];
    const text = summary.map((s) => (isObject(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n');
    const enc = optStr(item.encrypted_content, `${f}.encrypted_content`);
    pushPart(messages, 'assistant', {
      type: 'thinking', text,
      ...(enc ? { signature: { ...unwrapOpaque(enc, 'responses'), ...(typeof item.id === 'string' ? { id: item.id } : {}) } } : {}),
      ...(typeof item.id === 'string' ? { itemId: item.id } : {}),
    });
    return;
  }
  if (typeof type !== 'string') throw unknownType(`${f}.type`, type);
  // A reference the route could not resolve from this account's stored answers is not forwarded either:
  // the upstream might hold another account's item under that id.
  if (type === 'item_reference') throw new UntranslatableField(`${f}.id`, 'item_reference items must name an item of a response this account stored');
  left.push({ field: `${f}.type`, reason: `${type} items have no counterpart in other formats` });
};

const decodeToolChoice = (v: unknown): ToolChoice | undefined => {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return { type: v };
  const c = obj(v, 'tool_choice');
  if (c.type === 'function' || c.type === 'custom') return { type: 'tool', name: str(c.name, 'tool_choice.name') };
  throw new UntranslatableField('tool_choice', `${String(c.type)} tool choice has no counterpart in the upstream format`);
};

const decodeTool = (t: unknown, f: string, namespace?: ToolDefinition['namespace']): ToolDefinition => {
  const tool = obj(t, f);
  const grouped = namespace ? { namespace } : {};
  if (tool.type === 'custom')
    return {
      name: str(tool.name, `${f}.name`),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: { ...CUSTOM_TOOL_PARAMETERS },
      custom: isObject(tool.format) ? { format: tool.format } : {},
      ...grouped,
    };
  if (tool.type !== 'function') throw unknownType(`${f}.type`, tool.type);
  const strict = optBool(tool.strict, `${f}.strict`);
  return {
    name: str(tool.name, `${f}.name`),
    ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    parameters: tool.parameters == null ? { type: 'object', properties: {} } : obj(tool.parameters, `${f}.parameters`),
    ...(strict !== undefined ? { strict } : {}),
    ...grouped,
  };
};

/**
 * The tools the client runs (function and custom tools, those of a namespace ungrouped) and those
 * that run on OpenAI's servers (web_search, file_search, ...), kept whole for this format alone.
 */
const decodeTools = (v: unknown): { tools: ToolDefinition[]; hostedTools?: HostedTool[] } => {
  const tools: ToolDefinition[] = [];
  const hostedTools: HostedTool[] = [];
  arr(v, 'tools').forEach((t, i) => {
    const f = `tools[${i}]`;
    const tool = obj(t, f);
    if (tool.type === 'function' || tool.type === 'custom') return void tools.push(decodeTool(tool, f));
    if (tool.type === 'namespace') {
      const namespace = { name: str(tool.name, `${f}.name`), description: optStr(tool.description, `${f}.description`) ?? '' };
      return void arr(tool.tools, `${f}.tools`).forEach((inner, j) => tools.push(decodeTool(inner, `${f}.tools[${j}]`, namespace)));
    }
    if (typeof tool.type !== 'string') throw unknownType(`${f}.type`, tool.type);
    hostedTools.push({ format: 'responses', tool, field: `${f}.type`, reason: `the ${tool.type} tool runs on OpenAI's servers and has no counterpart in the upstream format` });
  });
  return { tools, ...(hostedTools.length > 0 ? { hostedTools } : {}) };
};

export const decodeRequest = (input: unknown): TextRequest => {
  const body = obj(input, 'body');
  const messages: TextMessage[] = [];
  const left: Untranslatable[] = [];
  const instructions = optStr(body.instructions, 'instructions');
  if (instructions) messages.push({ role: 'system', content: [{ type: 'text', text: instructions }] });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: [{ type: 'text', text: body.input }] });
  else if (body.input !== undefined) arr(body.input, 'input').forEach((item, i) => decodeItem(messages, item, i, left));
  const reasoning = isObject(body.reasoning) ? body.reasoning : undefined;
  const effort = reasoning ? optStr(reasoning.effort, 'reasoning.effort') : undefined;
  const summary = reasoning ? (optStr(reasoning.summary, 'reasoning.summary') ?? optStr(reasoning.generate_summary, 'reasoning.generate_summary')) : undefined;
  const thinking = thinkingForEffort(effort) ?? (summary ? { mode: 'adaptive' as const } : undefined);
  if (thinking && summary) Object.assign(thinking, { summary, includeThoughts: true });
  const text = isObject(body.text) ? body.text : {};
  const req: TextRequest = {
    model: str(body.model, 'model'),
    messages,
    ...(body.tools == null ? {} : decodeTools(body.tools)),
    untranslatable: left.length > 0 ? left : undefined,
    toolChoice: decodeToolChoice(body.tool_choice),
    parallelToolCalls: optBool(body.parallel_tool_calls, 'parallel_tool_calls'),
    thinking,
    output: decodeFormat(text.format),
    maxOutputTokens: optNum(body.max_output_tokens, 'max_output_tokens'),
    temperature: optNum(body.temperature, 'temperature'),
    topP: optNum(body.top_p, 'top_p'),
    stream: optBool(body.stream, 'stream'),
    user: optStr(body.user, 'user') ?? optStr(body.safety_identifier, 'safety_identifier'),
    metadata: isObject(body.metadata) ? (body.metadata as Record<string, string>) : undefined,
    store: optBool(body.store, 'store'),
    previousResponseId: optStr(body.previous_response_id, 'previous_response_id'),
  };
  for (const k of Object.keys(req) as Array<keyof TextRequest>) if (req[k] === undefined) delete req[k];
  return req;
};

/** Responses flattens the JSON schema format (`{type, name, schema, strict}`) that chat nests under `json_schema`. */
const decodeFormat = (v: unknown): OutputFormat | undefined => {
  if (v === undefined || v === null) return undefined;
  const f = obj(v, 'text.format');
  if (f.type !== 'json_schema') return decodeOutputFormat(f, 'text.format');
  const strict = optBool(f.strict, 'text.format.strict');
  const description = optStr(f.description, 'text.format.description');
  return {
    type: 'json_schema', name: str(f.name, 'text.format.name'), schema: obj(f.schema, 'text.format.schema'),
    ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}),
  };
};
