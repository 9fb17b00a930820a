// The neutral request into a Responses API body (OpenAI `/v1/responses`).
import {
  customInput, dataUrl, splitLeadingSystem, textOf, UntranslatableField, wrapOpaque,
  type ContentPart, type Json, type TextRequest, type ToolDefinition, type ToolResultContent,
} from '../../core/text/index.ts';
import { OPENAI_FILES, reasoningEffort } from '../openai-shared.ts';

const toolOut = (d: ToolDefinition): Json => d.custom ? {
  type: 'custom', name: d.name, ...(d.description !== undefined ? { description: d.description } : {}), ...(d.custom.format ? { format: d.custom.format } : {}),
} : {
  type: 'function', name: d.name, ...(d.description !== undefined ? { description: d.description } : {}),
  parameters: d.parameters,
  // Responses treats an absent `strict` as true; other formats mean "not strict".
  strict: d.strict ?? false,
};

/** The tools, those of a namespace grouped again where its first one stood, then the hosted tools of this format. */
const encodeTools = (req: TextRequest): Json[] => {
  const out: Json[] = [];
  const groups = new Map<string, Json[]>();
  for (const d of req.tools ?? []) {
    if (!d.namespace) { out.push(toolOut(d)); continue; }
    let group = groups.get(d.namespace.name);
    if (!group) {
      groups.set(d.namespace.name, (group = []));
      out.push({ type: 'namespace', name: d.namespace.name, description: d.namespace.description, tools: group });
    }
    group.push(toolOut(d));
  }
  for (const h of req.hostedTools ?? []) if (h.format === 'responses') out.push(h.tool as Json);
  return out;
};

const inputPart = (p: ToolResultContent, field: string): Json => {
  if (p.type === 'text') return { type: 'input_text', text: p.text };
  const s = p.source;
  if (s.kind === 'file' && !OPENAI_FILES.includes(s.format)) throw new UntranslatableField(`${field}.source`, `a file id issued by the ${s.format} API`);
  if (p.type === 'image') {
    const at = s.kind === 'file' ? { file_id: s.fileId } : { image_url: s.kind === 'base64' ? dataUrl(s) : s.url };
    return { type: 'input_image', ...at, detail: p.detail ?? 'auto' };
  }
  if (s.kind === 'base64' && s.mediaType.startsWith('text/')) return { type: 'input_text', text: Buffer.from(s.data, 'base64').toString('utf8') };
  const at = s.kind === 'file' ? { file_id: s.fileId } : s.kind === 'url' ? { file_url: s.url } : { file_data: dataUrl(s), filename: p.filename ?? 'document.pdf' };
  return { type: 'input_file', ...at, ...(s.kind !== 'base64' && p.filename ? { filename: p.filename } : {}) };
};

/** One neutral part as Responses input items; reasoning another vendor produced cannot be replayed and is left out. */
const items = (role: string, p: ContentPart, field: string, custom: Set<string>): Json[] => {
  switch (p.type) {
    case 'tool_call':
      return custom.has(p.id)
        ? [{ type: 'custom_tool_call', call_id: p.id, name: p.name, input: customInput(p.arguments) }]
        : [{ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments || '{}' }];
    case 'tool_result': {
      if (custom.has(p.callId)) return [{ type: 'custom_tool_call_output', call_id: p.callId, output: textOf(p.content) }];
      const only = p.content.length === 1 && p.content[0].type === 'text';
      const output = only ? textOf(p.content) : p.content.map((c, k) => inputPart(c, `${field}.content[${k}]`));
      return [{ type: 'function_call_output', call_id: p.callId, output: p.isError && typeof output === 'string' ? `Error: ${output}` : output }];
    }
    case 'thinking':
      const id = p.itemId ?? p.signature?.id;
      if (p.signature?.format !== 'responses' || !id) return [];
      return [{
        type: 'reasoning', id,
        summary: p.text ? [{ type: 'summary_text', text: p.text }] : [],
        encrypted_content: wrapOpaque(p.signature, 'responses'),
      }];
    case 'text':
      // An assistant turn goes back as an easy input message: output_text parts would need the item id and status.
      if (role === 'assistant') return [{ type: 'message', role: 'assistant', content: p.text }];
      return [{ type: 'message', role, content: [inputPart(p, field)] }];
    default:
      if (role === 'assistant') throw new UntranslatableField(field, `an assistant ${p.type} part`);
      return [{ type: 'message', role, content: [inputPart(p, field)] }];
  }
};

/** Adjacent parts of one turn that are plain content share one message item. */
const mergeMessages = (list: Json[]): Json[] =>
  list.reduce<Json[]>((out, it) => {
    const last = out[out.length - 1];
    if (last && last.type === 'message' && it.type === 'message' && last.role === it.role) {
      if (typeof last.content === 'string') last.content += it.content as string;
      else (last.content as Json[]).push(...(it.content as Json[]));
    }
    else out.push(it);
    return out;
  }, []);

/** Calls of free-text tools: marked by their format, or made to a tool the request declares free-text. */
const customCalls = (req: TextRequest): Set<string> => {
  const tools = new Set((req.tools ?? []).filter((t) => t.custom).map((t) => t.name));
  const ids = new Set<string>();
  for (const m of req.messages) for (const p of m.content) if (p.type === 'tool_call' && (p.custom || tools.has(p.name))) ids.add(p.id);
  return ids;
};

export const encodeInput = (req: TextRequest, from = 0): Json[] => {
  const custom = customCalls(req);
  // A call to a tool of a namespace names the namespace, as the Responses API answered it.
  const namespaces = new Map((req.tools ?? []).flatMap((t) => (t.namespace ? [[t.name, t.namespace.name] as const] : [])));
  const named = (it: Json): Json => ((it.type === 'function_call' || it.type === 'custom_tool_call') && namespaces.has(String(it.name)) ? { ...it, namespace: namespaces.get(String(it.name)) } : it);
  return mergeMessages(req.messages.slice(from).flatMap((m, i) => m.content.flatMap((p, j) => items(m.role, p, `messages[${i + from}].content[${j}]`, custom).map(named))));
};

export const encodeRequest = (req: TextRequest, targetModel: string): Json => {
  if (req.stop?.length) throw new UntranslatableField('stop', 'the Responses API has no stop sequences');
  const { system } = splitLeadingSystem(req.messages);
  system.forEach((m, i) => m.content.forEach((p, j) => { if (p.type !== 'text') throw new UntranslatableField(`messages[${i}].content[${j}]`, 'instructions carry text only'); }));
  const instructions = system.flatMap((m) => m.content.map((p) => textOf([p]))).join('\n\n');
  const c = req.toolChoice;
  const effort = reasoningEffort(req.thinking);
  const summary = req.thinking?.summary ?? (req.thinking?.includeThoughts ? 'auto' : undefined);
  const out = req.output;
  // Without stored state upstream, reasoning must come back encrypted to be replayed on the next turn.
  const store = req.store ?? false;
  return {
    model: targetModel,
    ...(instructions ? { instructions } : {}),
    input: encodeInput(req, system.length),
    ...(req.tools || req.hostedTools ? { tools: encodeTools(req) } : {}),
    ...(c ? { tool_choice: c.type === 'tool' ? { type: req.tools?.find((t) => t.name === c.name)?.custom ? 'custom' : 'function', name: c.name } : c.type } : {}),
    ...(req.parallelToolCalls !== undefined ? { parallel_tool_calls: req.parallelToolCalls } : {}),
    ...(effort || summary ? { reasoning: { ...(effort ? { effort } : {}), ...(summary ? { summary } : {}) } } : {}),
    ...(!store && effort && effort !== 'none' ? { include: ['reasoning.encrypted_content'] } : {}),
    ...(out ? { text: { format: out.type === 'json_object' ? { type: 'json_object' } : {
      type: 'json_schema', name: out.name ?? 'output', schema: out.schema,
      ...(out.description ? { description: out.description } : {}), ...(out.strict !== undefined ? { strict: out.strict } : {}),
    } } } : {}),
    ...(req.maxOutputTokens !== undefined ? { max_output_tokens: req.maxOutputTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stream ? { stream: true } : {}),
    store,
    ...(req.previousResponseId ? { previous_response_id: req.previousResponseId } : {}),
    ...(req.user ? { user: req.user } : {}),
    ...(req.metadata ? { metadata: req.metadata } : {}),
  };
};
