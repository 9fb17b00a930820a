import { UntranslatableField, type TextAnswer, type TextRequest as NeutralRequest, type TextStreamEvent, type WireCall } from '../../core/text/index.ts';
import { newId } from '../../lib/ids.ts';
import { callerChunks, encodeForCaller } from '../../formats/caller.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import type { FinishReason, TextChunk, TextProvider, TextRequest, TextResult } from '../../core/text/provider.ts';

// A wire call on an upstream that knows only text and images (another gateway's native endpoint,
// a relay): the text view goes (wire-view.ts), the answer is encoded in the caller's format. What
// the view would lose and could change the answer (tools, tool turns, an output schema, a PDF) is
// a 400 naming the field, never dropped in silence.

const STOP: Record<FinishReason, TextAnswer['stopReason']> = { stop: 'end_turn', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', tool_calls: 'tool_use' };

function refuseWhatTextLoses(request: NeutralRequest): void {
  const left = request.untranslatable?.[0];
  if (left) throw new UntranslatableField(left.field, left.reason);
  if (request.tools?.length && request.toolChoice?.type !== 'none') throw new UntranslatableField('tools', "this model's upstream takes no tools");
  if (request.output) throw new UntranslatableField('output format', "this model's upstream takes no output schema");
  request.messages.forEach((message, i) => {
    for (const part of message.content) {
      if (part.type === 'tool_call' || part.type === 'tool_result') throw new UntranslatableField(`messages[${i}]`, `a ${part.type} turn cannot go to this model's upstream (no tools)`);
      if (part.type === 'document' && !(part.source.kind === 'base64' && part.source.mediaType.startsWith('text/'))) throw new UntranslatableField(`messages[${i}]`, "a document cannot go to this model's upstream");
      if (part.type === 'image' && part.source.kind !== 'base64') throw new UntranslatableField(`messages[${i}]`, "an image by URL cannot go to this model's upstream (send it inline)");
    }
  });
}

function textOnly(request: TextRequest): TextRequest {
  const { wire, ...rest } = request;
  refuseWhatTextLoses(wire!.request);
  return rest;
}

export function throughTextView(provider: TextProvider): TextProvider {
  return {
    speaksWire: true,
    async generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
      const wire = request.wire!;
      const result = await provider.generate(textOnly(request), signal);
      const answer: TextAnswer = { id: newId('msg'), model: wire.model, content: [{ type: 'text', text: result.text }], stopReason: STOP[result.finish], ...(result.stopSequence ? { stopSequence: result.stopSequence } : {}), usage: result.usage };
      return { ...result, wireBody: encodeForCaller(wire, answer) };
    },
    async *stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
      const wire = request.wire!;
      yield* encodedStream(wire, provider.stream(textOnly(request), signal));
    },
  };
}

/** Text deltas and the end of a text-only stream as the caller's format's events. */
async function* encodedStream(wire: WireCall, chunks: AsyncIterable<TextChunk>): AsyncIterable<TextChunk> {
  const out = callerChunks(wire);
  let started = false;
  const start = (): TextStreamEvent[] => (started ? [] : ((started = true), [{ type: 'start', id: newId('msg'), model: wire.model }, { type: 'block_start', index: 0, block: { type: 'text' } }]));
  for await (const chunk of chunks) {
    if (chunk.type === 'delta') yield out([...start(), { type: 'text_delta', index: 0, text: chunk.text }], chunk.text);
    else if (chunk.type === 'usage') yield chunk;
    else if (chunk.type === 'end') {
      yield out([...start(), { type: 'block_stop', index: 0 }, { type: 'finish', stopReason: STOP[chunk.finish], ...(chunk.stopSequence ? { stopSequence: chunk.stopSequence } : {}), usage: chunk.usage }]);
      yield chunk;
    }
  }
}
