// The neutral stream: block-structured like the richest vendor stream, so every format's events map onto
// it without reordering. Indexes are the block's position in the answer's content.
import type { UsageClasses } from '../usage.ts';
import type { OpaqueValue } from './parts.ts';
import type { StopReason } from './answer.ts';

export type BlockStart =
  | { type: 'text' }
  | { type: 'thinking'; redacted?: boolean; signature?: OpaqueValue; itemId?: string }
  | { type: 'tool_call'; id: string; name: string; signature?: OpaqueValue; custom?: boolean };

export type TextStreamEvent =
  | { type: 'start'; id: string; model: string; created?: number }
  | { type: 'block_start'; index: number; block: BlockStart }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'thinking_delta'; index: number; text: string }
  | { type: 'signature'; index: number; signature: OpaqueValue }
  | { type: 'arguments_delta'; index: number; json: string }
  | { type: 'block_stop'; index: number }
  | { type: 'finish'; stopReason: StopReason; stopSequence?: string; usage: UsageClasses }
  /** The vendor reported an error mid-stream; no finish follows. */
  | { type: 'error'; message: string; code?: string };

/** One server-sent event as a format writes it: `event` is the SSE event name where the format uses one. */
export interface SseFrame {
  event?: string;
  data: string;
}

export const sseText = (frames: SseFrame[]): string =>
  frames.map((f) => `${f.event ? `event: ${f.event}\n` : ''}data: ${f.data}\n\n`).join('');

/** A stream encoder turns neutral events into its format's frames; `end` flushes what the format owes at the close. */
export interface StreamEncoder {
  push(event: TextStreamEvent): SseFrame[];
}

/** A stream decoder reads one parsed vendor event (JSON data or `[DONE]`) and yields neutral events. */
export interface StreamDecoder {
  push(data: unknown, eventName?: string): TextStreamEvent[];
  /**
   * Events still owed when the vendor stream ended. A stream cut before its vendor's end yields no
   * `finish`: the caller tells a cut stream by its absence.
   */
  end(): TextStreamEvent[];
}
