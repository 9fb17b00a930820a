import { decode, encode } from 'gpt-tokenizer';
import { promptTokens } from '../../lib/tokens/tokens.ts';
import type { TextChunk, TextProvider, TextRequest, TextResult } from '../../core/text/provider.ts';
import { TextUpstreamUnavailable } from '../../core/text/provider.ts';
import { parseDirectives } from './directives.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import { simulatedWireAnswer, simulatedWireStream } from './wire.ts';
import { lastUserText, simulatedReply } from './reply.ts';
import { judgeSampling } from './sampling.ts';

// Deterministic text replies with real token counts (the same tokenizer counts prompt and reply).
// `[sim:fail]` makes the upstream unavailable; `[sim:delay=s]` waits before the first token.

const CHUNK_TOKENS = 4;

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
    judgeSampling(request);
    const directives = parseDirectives(lastUserText(request), request.system);
    if (directives.delayMs) await sleep(directives.delayMs, signal);
    if (directives.fail) throw new TextUpstreamUnavailable(`simulated upstream failure (${directives.fail})`);
  }
}
