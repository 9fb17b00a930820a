// The neutral request into a chat completions body (OpenAI).
import { OPENAI_FILES, reasoningEffort } from '../openai-shared.ts';
import {
  dataUrl, textOf, UntranslatableField,
  type ContentPart, type Json, type MediaSource, type TextMessage, type TextRequest,
} from '../../core/text/index.ts';

const fileOk = (s: Extract<MediaSource, { kind: 'file' }>, field: string): string => {
  if (!OPENAI_FILES.includes(s.format)) throw new UntranslatableField(field, `a file id issued by the ${s.format} API`);
  return s.fileId;
};

/** A user-side part as a chat content part (text, image_url, file). */
const userPart = (p: ContentPart, field: string): Json => {
  if (p.type === 'text') return { type: 'text', text: p.text };
  if (p.type === 'image') {
    const s = p.source;
    if (s.kind === 'file') throw new UntranslatableField(`${field}.source`, 'chat completions take images by URL or data URL only');
    const url = s.kind === 'base64' ? dataUrl(s) : s.url;
    return { type: 'image_url', image_url: { url, ...(p.detail && p.detail !== 'original' ? { detail: p.detail } : {}) } };
  }
  if (p.type === 'document') {
    const s = p.source;
    if (s.kind === 'url') throw new UntranslatableField(`${field}.source`, 'chat completions take documents inline or by file id, not by URL');
    if (s.kind === 'base64' && s.mediaType.startsWith('text/')) return { type: 'text', text: Buffer.from(s.data, 'base64').toString('utf8') };
    const file = s.kind === 'file' ? { file_id: fileOk(s, `${field}.source`) } : { file_data: dataUrl(s), filename: p.filename ?? 'document.pdf' };
    return { type: 'file', file: { ...file, ...(s.kind === 'file' && p.filename ? { filename: p.filename } : {}) } };
  }
  throw new UntranslatableField(field, `a ${p.type} part cannot stand in a chat user message`);
};

/**
 * A neutral user turn as chat messages: each tool result becomes a `tool` message (text only); images and
 * documents a tool returned follow in a user message so the model still sees them.
 */
const userMessages = (m: TextMessage, at: number): Json[] => {
  const out: Json[] = [];
  const rest: Json[] = [];
  m.content.forEach((p, j) => {
    const f = `messages[${at}].content[${j}]`;
    if (p.type !== 'tool_result') return rest.push(userPart(p, f));
    const text = textOf(p.content);
    out.push({ role: 'tool', tool_call_id: p.callId, content: p.isError ? `Error: ${text}` : text });
    p.content.forEach((c, k) => { if (c.type !== 'text') rest.push(userPart(c, `${f}.content[${k}]`)); });
  });
  if (rest.length) out.push({ role: 'user', content: rest.length === 1 && rest[0].type === 'text' ? rest[0].text : rest });
  return out;
};

const assistantMessage = (m: TextMessage): Json => {
  const text = textOf(m.content);
  const calls = m.content.flatMap((p) => (p.type === 'tool_call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments || '{}' } }] : []));
  return { role: 'assistant', content: text === '' && calls.length ? null : text, ...(calls.length ? { tool_calls: calls } : {}) };
};

export const encodeMessages = (messages: TextMessage[]): Json[] =>
  messages.flatMap((m, i): Json[] => {
    if (m.role === 'system' || m.role === 'developer') {
      m.content.forEach((p, j) => { if (p.type !== 'text') throw new UntranslatableField(`messages[${i}].content[${j}]`, 'chat instructions carry text only'); });
      const texts = m.content.map((p) => ({ type: 'text', text: (p as { text: string }).text }));
      return [{ role: m.role, content: texts.length === 1 ? texts[0].text : texts }];
    }
    if (m.role === 'assistant') return [assistantMessage(m)];
    return userMessages(m, i);
  });

export const encodeRequest = (req: TextRequest, targetModel: string): Json => {
  const c = req.toolChoice;
  const effort = reasoningEffort(req.thinking);
  const out = req.output;
  return {
    model: targetModel,
    messages: encodeMessages(req.messages),
    ...(req.tools ? { tools: req.tools.map((d) => ({
      type: 'function',
      function: { name: d.name, ...(d.description !== undefined ? { description: d.description } : {}), parameters: d.parameters, ...(d.strict !== undefined ? { strict: d.strict } : {}) },
    })) } : {}),
    ...(c ? { tool_choice: c.type === 'tool' ? { type: 'function', function: { name: c.name } } : c.type } : {}),
    ...(req.parallelToolCalls !== undefined && req.tools?.length ? { parallel_tool_calls: req.parallelToolCalls } : {}),
    ...(effort ? { reasoning_effort: effort } : {}),
    ...(out ? { response_format: out.type === 'json_object' ? { type: 'json_object' } : {
      type: 'json_schema',
      json_schema: { name: out.name ?? 'output', ...(out.description ? { description: out.description } : {}), schema: out.schema, ...(out.strict !== undefined ? { strict: out.strict } : {}) },
    } } : {}),
    ...(req.maxOutputTokens !== undefined ? { max_completion_tokens: req.maxOutputTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stop?.length ? { stop: req.stop } : {}),
    // The gateway bills from usage, so a translated stream always asks for the usage chunk.
    ...(req.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    ...(req.user ? { user: req.user } : {}),
  };
};
