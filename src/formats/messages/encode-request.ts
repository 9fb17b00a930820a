// The neutral request into a messages API body (Anthropic).
import {
  argumentsObject, splitLeadingSystem, UntranslatableField, wrapOpaque,
  type ContentPart, type Json, type MediaSource, type TextRequest,
} from '../../core/text/index.ts';
import { thinkingFor } from './thinking.ts';

/** Anthropic requires an output ceiling; a caller of a format without one gets this. */
export const DEFAULT_MAX_TOKENS = 8192;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

const cacheControl = (p: { cache?: { ttl?: '5m' | '1h' } }): Json =>
  p.cache ? { cache_control: { type: 'ephemeral', ...(p.cache.ttl ? { ttl: p.cache.ttl } : {}) } } : {};

const source = (s: MediaSource, field: string, kind: 'image' | 'document'): Json => {
  if (s.kind === 'url') return { type: 'url', url: s.url };
  if (s.kind === 'file') {
    if (s.format !== 'messages') throw new UntranslatableField(field, `a file id issued by the ${s.format} API`);
    return { type: 'file', file_id: s.fileId };
  }
  if (kind === 'image') {
    if (!IMAGE_TYPES.includes(s.mediaType)) throw new UntranslatableField(field, `image type ${s.mediaType} (the target takes ${IMAGE_TYPES.join(', ')})`);
    return { type: 'base64', media_type: s.mediaType, data: s.data };
  }
  if (s.mediaType === 'application/pdf') return { type: 'base64', media_type: 'application/pdf', data: s.data };
  if (s.mediaType.startsWith('text/')) return { type: 'text', media_type: 'text/plain', data: Buffer.from(s.data, 'base64').toString('utf8') };
  throw new UntranslatableField(field, `document type ${s.mediaType} (the target takes PDF and plain text)`);
};

/**
 * One neutral part as content blocks; thinking another vendor signed is left out, as Anthropic could not
 * verify it, and so is empty text, which Anthropic refuses ("text content blocks must be non-empty").
 */
export const encodeBlock = (p: ContentPart, field: string): Json[] => {
  switch (p.type) {
    case 'text':
      return p.text === '' ? [] : [{ type: 'text', text: p.text, ...cacheControl(p) }];
    case 'image':
      return [{ type: 'image', source: source(p.source, `${field}.source`, 'image'), ...cacheControl(p) }];
    case 'document':
      return [{ type: 'document', source: source(p.source, `${field}.source`, 'document'), ...(p.title ? { title: p.title } : {}), ...cacheControl(p) }];
    case 'tool_call':
      return [{ type: 'tool_use', id: p.id, name: p.name, input: argumentsObject(p.arguments), ...cacheControl(p) }];
    case 'tool_result': {
      // A result with nothing in it goes without content (the field is optional), not with empty text.
      const content = p.content.flatMap((c, i) => encodeBlock(c, `${field}.content[${i}]`));
      return [{
        type: 'tool_result',
        tool_use_id: p.callId,
        ...(content.length ? { content } : {}),
        ...(p.isError ? { is_error: true } : {}),
        ...cacheControl(p),
      }];
    }
    case 'thinking':
      if (p.signature?.format !== 'messages') return [];
      return p.redacted
        ? [{ type: 'redacted_thinking', data: p.signature.value }]
        : [{ type: 'thinking', thinking: p.text, signature: wrapOpaque(p.signature, 'messages') }];
  }
};

/**
 * Whether the request continues a tool-using turn whose first assistant message does not open with a
 * thinking block Anthropic signed: with thinking on, Anthropic refuses it ("a final assistant message must
 * start with a thinking block"), and a client of another format has no such block to send back.
 */
const continuesUnsignedTurn = (messages: Json[]): boolean => {
  const bringsResults = (m: Json) => (m.content as Json[]).some((b) => b.type === 'tool_result');
  const last = messages.length - 1;
  if (messages[last]?.role !== 'user' || !bringsResults(messages[last])) return false;
  // The turn began after the last user message before this one that brought no tool results.
  let began = last;
  while (began > 0 && !(messages[began - 1].role === 'user' && !bringsResults(messages[began - 1]))) began--;
  const first = messages.slice(began).find((m) => m.role === 'assistant');
  const type = (first?.content as Json[] | undefined)?.[0]?.type;
  return type !== 'thinking' && type !== 'redacted_thinking';
};

export const encodeRequest = (req: TextRequest, targetModel: string): Json => {
  const { system, rest } = splitLeadingSystem(req.messages);
  const systemBlocks = system.flatMap((m, i) => m.content.flatMap((p, j) => encodeBlock(p, `messages[${i}].content[${j}]`)));
  const messages = rest.map((m, i) => {
    const at = i + system.length;
    const content = m.content.flatMap((p, j) => encodeBlock(p, `messages[${at}].content[${j}]`));
    // Anthropic wants a turn's tool results before anything else the user adds to it.
    if (m.role === 'user') content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
    const role = m.role === 'developer' ? 'system' : m.role;
    return { role, content };
  }).filter((m) => m.content.length > 0);
  const plainSystem = systemBlocks.length === 1 && systemBlocks[0].cache_control === undefined;
  const t = thinkingFor(req, req.maxOutputTokens ?? DEFAULT_MAX_TOKENS, continuesUnsignedTurn(messages), targetModel);
  const thinkingOn = t.thinking !== undefined && t.thinking.type !== 'disabled';
  const choice = req.toolChoice;
  const noParallel = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  const toolChoice =
    choice?.type === 'none' ? { type: 'none' }
    : choice?.type === 'required' ? { type: 'any', ...noParallel }
    : choice?.type === 'tool' ? { type: 'tool', name: choice.name, ...noParallel }
    : choice?.type === 'auto' || req.parallelToolCalls === false ? { type: 'auto', ...noParallel }
    : undefined;
  if (req.output?.type === 'json_object') throw new UntranslatableField('response_format', 'JSON mode without a schema has no counterpart in the messages API');
  const outputConfig = { ...(t.output_config ?? {}), ...(req.output?.type === 'json_schema' ? { format: { type: 'json_schema', schema: req.output.schema } } : {}) };
  const body: Json = {
    model: targetModel,
    max_tokens: t.max_tokens,
    ...(systemBlocks.length ? { system: plainSystem ? systemBlocks[0].text : systemBlocks } : {}),
    messages,
    ...(req.tools || req.hostedTools ? { tools: [...(req.tools ?? []).map((d) => ({
      name: d.name,
      ...(d.description !== undefined ? { description: d.description } : {}),
      input_schema: { type: 'object', ...d.parameters },
      ...(d.strict !== undefined ? { strict: d.strict } : {}),
    })), ...(req.hostedTools ?? []).filter((h) => h.format === 'messages').map((h) => h.tool as Json)] } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(t.thinking ? { thinking: t.thinking } : {}),
    ...(Object.keys(outputConfig).length ? { output_config: outputConfig } : {}),
    // With thinking on, Anthropic takes no temperature or top_k and only a top_p of 0.95 or more: these
    // shape sampling, not what the answer means, so they give way.
    ...(req.temperature !== undefined && !thinkingOn ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined && (!thinkingOn || req.topP >= 0.95) ? { top_p: req.topP } : {}),
    ...(req.topK !== undefined && !thinkingOn ? { top_k: req.topK } : {}),
    ...(req.stop?.length ? { stop_sequences: req.stop } : {}),
    ...(req.stream ? { stream: true } : {}),
    ...(req.user ? { metadata: { user_id: req.user } } : {}),
  };
  return body;
};
