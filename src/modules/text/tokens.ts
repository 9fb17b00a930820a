import { countTokens } from 'gpt-tokenizer';
import type { TextRequest } from './text.types.ts';

// Token counts for billing when an upstream reports none, and for the simulator: a real BPE
// tokenizer from npm; an image counts as a fixed 258 tokens.

export const IMAGE_TOKENS = 258;

export function promptTokens(request: Pick<TextRequest, 'system' | 'messages'>): number {
  let tokens = request.system ? countTokens(request.system) : 0;
  for (const message of request.messages) {
    for (const part of message.parts) tokens += part.type === 'text' ? countTokens(part.text) : IMAGE_TOKENS;
  }
  return tokens;
}

export const textTokens = (text: string) => countTokens(text);
