import { createHash } from 'node:crypto';
import { decode, encode } from 'gpt-tokenizer';
import { promptTokens } from '../../modules/text/tokens.ts';
import type { TextChunk, TextProvider, TextRequest, TextResult } from '../../modules/text/text.types.ts';
import { TextUpstreamUnavailable } from '../../modules/text/text.types.ts';
import { parseDirectives } from './directives.ts';
import type { CallSignal } from '../../http/call-signal.ts';
import { simulatedWireAnswer, simulatedWireStream } from './wire.ts';

// Deterministic text replies with real token counts (the same tokenizer counts prompt and reply).
// `[sim:fail]` makes the upstream unavailable; `[sim:delay=s]` waits before the first token.

const WORDS = ['the', 'gateway', 'answers', 'with', 'a', 'calm', 'and', 'simulated', 'voice', 'about', 'tokens', 'models', 'light', 'paper', 'rivers', 'clear', 'bright', 'steady'];
const CHUNK_TOKENS = 4;

function lastUserText(request: TextRequest): string {
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

const sleep = (ms: number, signal: CallSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export class SimulatorText implements TextProvider {
  readonly speaksWire = true;

  async generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    await this.prelude(request, signal);
    if (request.wire) return simulatedWireAnswer(request);
    const { outputTokens, ...reply } = simulatedReply(request);
    return { ...reply, usage: { input: promptTokens(request), cache_read: 0, cache_write: 0, output: outputTokens } };
  }

  async *stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    await this.prelude(request, signal);
    if (request.wire) return yield* simulatedWireStream(request, () => signal.aborted);
    const { text, finish, stopSequence, outputTokens } = simulatedReply(request);
    const tokens = encode(text);
    for (let i = 0; i < tokens.length; i += CHUNK_TOKENS) {
      if (signal.aborted) return;
      yield { type: 'delta', text: decode(tokens.slice(i, i + CHUNK_TOKENS)) };
      await new Promise((resolve) => setImmediate(resolve));
    }
    yield { type: 'end', finish, stopSequence, usage: { input: promptTokens(request), cache_read: 0, cache_write: 0, output: outputTokens } };
  }

  private async prelude(request: TextRequest, signal: CallSignal): Promise<void> {
    const directives = parseDirectives(lastUserText(request), request.system);
    if (directives.delayMs) await sleep(directives.delayMs, signal);
    if (directives.fail) throw new TextUpstreamUnavailable(`simulated upstream failure (${directives.fail})`);
  }
}
