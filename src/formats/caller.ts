import type { StreamEncoder, TextAnswer, TextStreamEvent, WireCall, WireFormat } from '../core/text/index.ts';
import type { StreamError, TextChunk } from '../core/text/provider.ts';
import { sseText } from '../core/text/index.ts';
import { newId } from '../lib/ids.ts';
import { FORMATS } from './index.ts';

// A neutral answer or stream in the caller's format, under an id of that format and naming the
// caller's model: what every translated call (and the simulator) sends back.

const ID_PREFIX: Record<WireFormat, string> = { messages: 'msg', chat: 'chatcmpl', responses: 'resp', gemini: 'gen' };

/** A neutral answer (translated, or the simulator's) in the caller's format, under an id of that format. */
export const encodeForCaller = (wire: WireCall, answer: TextAnswer) => FORMATS[wire.format].encodeAnswer({ ...answer, id: newId(ID_PREFIX[wire.format]), model: wire.model }, wire.request);

/**
 * Neutral events into the caller's format: its encoder, the start naming the caller's model.
 * `broken` is how the stream ends if it breaks off: the same encoder's error, so it goes on from
 * what went out (TextChunk `broken`).
 */
export function callerFrames(wire: WireCall): { frames(events: TextStreamEvent[]): string; broken(error: StreamError): string } {
  const encoder: StreamEncoder = FORMATS[wire.format].streamEncoder(wire.request);
  return {
    frames: (events) => sseText(events.flatMap((e) => encoder.push(e.type === 'start' ? { ...e, id: newId(ID_PREFIX[wire.format]), model: wire.model } : e))),
    broken: (error) => sseText(encoder.push(error)),
  };
}

/**
 * Neutral events as the caller's format's events chunks; `text` is what each one produced, and a
 * chunk's `text()` reads what the whole stream produced so far (TextChunk).
 */
export function callerChunks(wire: WireCall): (events: TextStreamEvent[], text?: string) => TextChunk {
  const { frames, broken } = callerFrames(wire);
  let produced = '';
  return (events, text = '') => {
    const soFar = (produced += text);
    return { type: 'events', parts: [Buffer.from(frames(events))], text: () => soFar, broken };
  };
}
