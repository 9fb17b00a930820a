import { createHash } from 'node:crypto';
import { decode, encode } from 'gpt-tokenizer';
import type { TextRequest, TextResult } from '../../core/text/provider.ts';

// The simulator's deterministic text reply, shared by its text-view provider (text.ts) and its
// wire surfaces (wire.ts).

const WORDS = ['the', 'gateway', 'answers', 'with', 'a', 'calm', 'and', 'simulated', 'voice', 'about', 'tokens', 'models', 'light', 'paper', 'rivers', 'clear', 'bright', 'steady'];

export function lastUserText(request: TextRequest): string {
  const user = [...request.messages].reverse().find((m) => m.role === 'user');
  return (user?.parts ?? []).map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');
}

/** The reply and why it ended: cut at a stop sequence, or at max tokens. */
export function simulatedReply(request: TextRequest): Omit<TextResult, 'usage'> & { outputTokens: number } {
  const prompt = lastUserText(request);
  const digest = createHash('sha256').update(`${request.model}\n${request.system ?? ''}\n${prompt}`).digest();
  const words = Array.from({ length: 24 }, (_, i) => WORDS[digest[i % digest.length]! % WORDS.length]);
  let text = `Simulated reply from ${request.model} to "${prompt.slice(0, 80)}": ${words.join(' ')}.`;
  let finish: TextResult['finish'] = 'stop';
  let stopSequence: string | null = null;
  for (const stop of request.stopSequences ?? []) {
    const at = stop ? text.indexOf(stop) : -1;
    if (at >= 0) {
      text = text.slice(0, at);
      finish = 'stop_sequence';
      stopSequence = stop;
    }
  }
  // The reply quotes the prompt, which may hold "<|endoftext|>": text, not a special token.
  let tokens = encode(text, { disallowedSpecial: new Set() });
  if (tokens.length > request.maxTokens) {
    tokens = tokens.slice(0, request.maxTokens);
    text = decode(tokens);
    finish = 'max_tokens';
    stopSequence = null;
  }
  return { text, finish, stopSequence, outputTokens: tokens.length };
}
