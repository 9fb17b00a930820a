import { countTokens } from 'gpt-tokenizer';
import type { TextMessage, TextRequest } from './text.types.ts';

// Token counts for billing when an upstream reports none, and for the simulator: a real BPE
// tokenizer from npm; an image counts as a fixed 258 tokens.

export const IMAGE_TOKENS = 258;

// One call asks for its prompt's count several times (the hold, the stream's first event, an
// upstream without usage, the simulator), through copies of the request that share its messages:
// the count is kept per messages array, which nothing changes after parsing.
const counted = new WeakMap<TextMessage[], { system: string | undefined; tokens: number }>();

// Chat clients send the whole conversation (and the same system prompt) on every turn: the count
// of each text seen recently is kept, bounded (cleared when full).
const textCounts = new Map<string, number>();
const MAX_TEXTS = 10_000;

function countText(text: string): number {
  let tokens = textCounts.get(text);
  if (tokens === undefined) {
    tokens = countTokens(text);
    if (textCounts.size >= MAX_TEXTS) textCounts.clear();
    textCounts.set(text, tokens);
  }
  return tokens;
}

export function promptTokens(request: Pick<TextRequest, 'system' | 'messages'>): number {
  const known = counted.get(request.messages);
  if (known && known.system === request.system) return known.tokens;
  let tokens = request.system ? countText(request.system) : 0;
  for (const message of request.messages) {
    for (const part of message.parts) tokens += part.type === 'text' ? countText(part.text) : IMAGE_TOKENS;
  }
  counted.set(request.messages, { system: request.system, tokens });
  return tokens;
}

export const textTokens = (text: string) => countTokens(text);
