import { badRequest } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import { DEFAULT_MAX_OUTPUT } from '../text/native.mapping.ts';
import type { FinishReason, TextMessage, TextPart, TextRequest, TextUsage } from '../text/text.types.ts';
import type { ChatRequest } from './chat.schemas.ts';

// The chat-completions format <-> the neutral text request, its answer and its chunks.

const TOOL_FIELDS = ['tools', 'tool_choice', 'parallel_tool_calls', 'response_format'] as const;
// Sampling and bookkeeping fields a chat-completions upstream takes as they came; others ignore them.
const UPSTREAM_FIELDS = ['seed', 'user', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'reasoning_effort', 'service_tier', 'metadata'];
const DATA_URL = /^data:(image\/[\w.+-]+);base64,(.*)$/s;

function parts(content: ChatRequest['messages'][number]['content'], where: string): TextPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, i): TextPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const image = DATA_URL.exec(part.image_url.url);
    if (!image) throw badRequest(`${where}.content[${i}].image_url.url must be a data: URL with a base64 image (data:image/png;base64,...)`);
    return { type: 'image', mediaType: image[1]!, data: image[2]! };
  });
}

export function fromChat(body: ChatRequest): TextRequest {
  const system: string[] = [];
  const messages: TextMessage[] = [];
  let toolTurns = false;
  // Tool turns and definitions go upstream as they came (passthrough.chatMessages): as JSON they are
  // a fair upper count of their tokens, for the hold and the input limit.
  const extra: unknown[] = [];
  body.messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    if (message.role === 'system' || message.role === 'developer') {
      system.push(parts(message.content, where).map((p) => (p.type === 'text' ? p.text : '')).join(''));
    } else if (message.role === 'tool' || message.tool_calls) {
      toolTurns = true;
      extra.push(message);
    } else {
      messages.push({ role: message.role as 'user' | 'assistant', parts: parts(message.content, where) });
    }
  });
  if (messages.length === 0 && !toolTurns) throw badRequest('messages: at least one user or assistant message is needed');
  const chatTools: Record<string, unknown> = {};
  for (const field of TOOL_FIELDS) if (body[field] !== undefined) chatTools[field] = body[field];
  if (body.tools !== undefined) extra.push(body.tools);
  if (body.response_format !== undefined) extra.push(body.response_format);
  if (toolTurns) chatTools['tool messages'] = true;
  const fields: Record<string, unknown> = {};
  for (const field of UPSTREAM_FIELDS) if ((body as Record<string, unknown>)[field] !== undefined) fields[field] = (body as Record<string, unknown>)[field];
  return {
    model: body.model,
    system: system.join('\n') || undefined,
    messages,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_OUTPUT,
    temperature: body.temperature,
    topP: body.top_p,
    stopSequences: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined),
    passthrough: { chatMessages: body.messages, chatFields: fields },
    ...(extra.length ? { promptExtra: JSON.stringify(extra) } : {}),
    ...(Object.keys(chatTools).length ? { chatTools } : {}),
  };
}

const FINISH: Record<FinishReason, string> = { stop: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_calls: 'tool_calls' };

export const completionId = () => newId('chatcmpl');

/** The chat format counts cached tokens inside prompt_tokens and reasoning inside completion_tokens. */
export function chatUsage(usage: TextUsage) {
  const prompt = usage.input + usage.cache_read + usage.cache_write;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
    ...(usage.cache_read > 0 ? { prompt_tokens_details: { cached_tokens: usage.cache_read } } : {}),
    ...(usage.reasoning ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } } : {}),
  };
}

export function chatCompletion(id: string, model: string, text: string, finish: FinishReason, usage: TextUsage, toolCalls?: unknown[]) {
  return {
    id,
    object: 'chat.completion' as const,
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: toolCalls && text === '' ? null : text, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: FINISH[finish],
        logprobs: null,
      },
    ],
    usage: chatUsage(usage),
  };
}

/** One `chat.completion.chunk`; `usage` only on the extra last chunk that include_usage asks for. */
export function chatChunk(id: string, created: number, model: string, delta: Record<string, unknown> | undefined, finish?: FinishReason, usage?: TextUsage) {
  return {
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    choices: delta ? [{ index: 0, delta, finish_reason: finish ? FINISH[finish] : null, logprobs: null }] : [],
    ...(usage ? { usage: chatUsage(usage) } : {}),
  };
}
