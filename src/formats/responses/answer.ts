// A Responses API `Response` to and from the neutral answer: output items, status, usage.
import type { UsageClasses } from '../../core/usage.ts';
import {
  argumentsComplete, arr, customArguments, customInput, isObject, obj, str, unwrapOpaque, wrapOpaque,
  type AnswerPart, type Json, type StopReason, type TextAnswer,
} from '../../core/text/index.ts';

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** `input_tokens` counts the whole prompt; its cached and cache-written parts are split out. */
export const usageIn = (u: unknown): UsageClasses => {
  const o = isObject(u) ? u : {};
  const id = isObject(o.input_tokens_details) ? o.input_tokens_details : {};
  const od = isObject(o.output_tokens_details) ? o.output_tokens_details : {};
  const read = n(id.cached_tokens);
  const write = n(id.cache_write_tokens);
  return {
    input: Math.max(0, n(o.input_tokens) - read - write),
    cache_read: read,
    cache_write: write,
    output: n(o.output_tokens),
    ...(typeof od.reasoning_tokens === 'number' ? { reasoning: od.reasoning_tokens } : {}),
  };
};

export const usageOut = (u: UsageClasses): Json => {
  const input = u.input + u.cache_read + u.cache_write;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cache_read, cache_write_tokens: u.cache_write },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: input + u.output,
  };
};

/** A finished response's stop reason: Responses says only complete or incomplete, and which items it made. */
export const stopReasonIn = (status: unknown, incomplete: unknown, hasCall: boolean, refused: boolean): StopReason => {
  const reason = isObject(incomplete) ? incomplete.reason : undefined;
  if (status === 'incomplete' || reason) return reason === 'content_filter' ? 'refusal' : 'max_tokens';
  if (refused) return 'refusal';
  return hasCall ? 'tool_use' : 'end_turn';
};

export const outputItemIn = (v: unknown, f: string): AnswerPart[] => {
  const item = obj(v, f);
  if (item.type === 'message')
    return arr(item.content, `${f}.content`).flatMap((c): AnswerPart[] => {
      if (!isObject(c)) return [];
      if (c.type === 'output_text') return [{ type: 'text', text: String(c.text ?? '') }];
      if (c.type === 'refusal') return [{ type: 'text', text: String(c.refusal ?? '') }];
      return [];
    });
  if (item.type === 'function_call')
    return [{ type: 'tool_call', id: str(item.call_id, `${f}.call_id`), name: str(item.name, `${f}.name`), arguments: String(item.arguments ?? '') }];
  if (item.type === 'custom_tool_call')
    return [{ type: 'tool_call', id: str(item.call_id, `${f}.call_id`), name: str(item.name, `${f}.name`), arguments: customArguments(String(item.input ?? '')), custom: true }];
  if (item.type === 'reasoning') {
    const parts = Array.isArray(item.summary) && item.summary.length ? item.summary : Array.isArray(item.content) ? item.content : [];
    const text = parts.map((s) => (isObject(s) ? String(s.text ?? '') : '')).join('\n\n');
    return [{
      type: 'thinking', text,
      ...(typeof item.encrypted_content === 'string' ? { signature: { ...unwrapOpaque(item.encrypted_content, 'responses'), ...(typeof item.id === 'string' ? { id: item.id } : {}) } } : {}),
      ...(typeof item.id === 'string' ? { itemId: item.id } : {}),
    }];
  }
  return [];
};

export const decodeAnswer = (input: unknown): TextAnswer => {
  const body = obj(input, 'body');
  const output = arr(body.output, 'output');
  const content = output.flatMap((it, i) => outputItemIn(it, `output[${i}]`));
  const refused = output.some((it) => isObject(it) && Array.isArray(it.content) && it.content.some((c) => isObject(c) && c.type === 'refusal'));
  return {
    id: str(body.id, 'id'),
    model: str(body.model, 'model'),
    content,
    stopReason: stopReasonIn(body.status, body.incomplete_details, content.some((p) => p.type === 'tool_call'), refused),
    usage: usageIn(body.usage),
    ...(typeof body.created_at === 'number' ? { created: body.created_at } : {}),
  };
};

/** Item ids derive from the answer id and position, so a stream and its final response agree. */
export const itemId = (prefix: 'msg' | 'fc' | 'ctc' | 'rs', answerId: string, index: number): string => `${prefix}_${answerId.replace(/^resp_/, '')}_${index}`;

/** The ids the response holding an item of ours may have (its answer id lost a `resp_` in the item's). */
export const responseIdsOfItem = (id: string): string[] => {
  const m = /^(?:msg|fc|ctc|rs)_(.+)_\d+$/.exec(id);
  return m ? [`resp_${m[1]}`, m[1]] : [];
};

/** The tools a request declared (its echoed `tools`), those of namespace tools included, with the namespace they are in. */
const declaredTools = (echo: Json): { tool: Json; namespace?: string }[] =>
  (Array.isArray(echo.tools) ? echo.tools : []).flatMap((t) => {
    if (!isObject(t)) return [];
    if (t.type === 'namespace' && Array.isArray(t.tools)) return t.tools.filter(isObject).map((tool) => ({ tool, namespace: String(t.name) }));
    return [{ tool: t }];
  });

/** The free-text tools a request declared: their calls go back as custom calls. */
export const customToolNames = (echo: Json): Set<string> =>
  new Set(declaredTools(echo).flatMap(({ tool }) => (tool.type === 'custom' ? [String(tool.name)] : [])));

/** The namespace each namespaced tool is in: a call to it names its namespace. */
export const toolNamespaces = (echo: Json): Map<string, string> =>
  new Map(declaredTools(echo).flatMap(({ tool, namespace }) => (namespace ? [[String(tool.name), namespace] as const] : [])));

export const outputItemOut = (p: AnswerPart, answerId: string, index: number, custom: Set<string> = new Set(), namespaces: Map<string, string> = new Map()): Json => {
  const namespace = p.type === 'tool_call' && namespaces.has(p.name) ? { namespace: namespaces.get(p.name) } : {};
  if (p.type === 'tool_call' && (p.custom || custom.has(p.name)))
    return { id: itemId('ctc', answerId, index), type: 'custom_tool_call', status: 'completed', call_id: p.id, ...namespace, name: p.name, input: customInput(p.arguments) };
  if (p.type === 'text')
    return { id: itemId('msg', answerId, index), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: p.text, annotations: [], logprobs: [] }] };
  if (p.type === 'tool_call')
    return { id: itemId('fc', answerId, index), type: 'function_call', status: argumentsComplete(p.arguments) ? 'completed' : 'incomplete', call_id: p.id, ...namespace, name: p.name, arguments: p.arguments };
  return {
    id: p.itemId ?? itemId('rs', answerId, index), type: 'reasoning',
    summary: p.text ? [{ type: 'summary_text', text: p.text }] : [],
    ...(p.signature ? { encrypted_content: wrapOpaque(p.signature, 'responses') } : {}),
  };
};

/** The Response object; `echo` carries the request's settings a client reads back (tools, instructions, ...). */
export const responseObject = (a: Omit<TextAnswer, 'stopReason'> & { stopReason?: StopReason }, status: string, output: Json[], echo: Json = {}): Json => ({
  id: a.id,
  object: 'response',
  created_at: a.created ?? Math.floor(Date.now() / 1000),
  status,
  error: null,
  incomplete_details: status === 'incomplete' ? { reason: a.stopReason === 'refusal' ? 'content_filter' : 'max_output_tokens' } : null,
  instructions: null,
  max_output_tokens: null,
  model: a.model,
  output,
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: null,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  truncation: 'disabled',
  usage: status === 'in_progress' ? null : usageOut(a.usage),
  metadata: {},
  ...echo,
});

export const statusOf = (s: StopReason): string => (s === 'max_tokens' ? 'incomplete' : 'completed');

export const encodeAnswer = (a: TextAnswer, echo: Json = {}): Json =>
  responseObject(a, statusOf(a.stopReason), a.content.map((p, i) => outputItemOut(p, a.id, i, customToolNames(echo), toolNamespaces(echo))), echo);
