import type { CallSignal } from '../../lib/call-signal.ts';
import { NO_USAGE, type UsageClasses } from '../usage.ts';
import type { ReportedUsage } from '../usage.ts';
import type { TextStreamEvent, WireCall } from './index.ts';

// The neutral shape every text endpoint is translated to and every text provider speaks, so the
// native content/parts endpoint and the messages endpoint share billing and providers.

export type TextPart = { type: 'text'; text: string } | { type: 'image'; mediaType: string; data: string };

export interface TextMessage {
  role: 'user' | 'assistant';
  parts: TextPart[];
}

export interface TextRequest {
  model: string;
  system?: string;
  messages: TextMessage[];
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  topP?: number;
  /**
   * What goes upstream besides system and messages, as text (a wire call's tool definitions, tool
   * choice, output schema): counted in the hold's estimate and the model's input limit.
   */
  promptExtra?: string;
  /** The native surface's Gemini fields (generationConfig, safetySettings, systemInstruction) a gemini upstream receives unchanged. */
  passthrough?: Record<string, unknown>;
  /**
   * A call on one of the four wire surfaces (core/text/call.ts): the provider forwards or translates
   * it, and answers in the caller's format (TextResult.wireBody, `events` chunks of that format).
   */
  wire?: WireCall;
}

export type FinishReason = 'stop' | 'max_tokens' | 'stop_sequence' | 'tool_calls';

/** A call's usage by token class (core/usage.ts): `input` is the uncached prompt only. */
export type TextUsage = UsageClasses;

/** The usage of a call that produced nothing (failed, or lost with its process). */
export const NOTHING_USED: Readonly<TextUsage> = NO_USAGE;

export interface TextResult {
  text: string;
  finish: FinishReason;
  stopSequence: string | null;
  usage: TextUsage;
  /** A wire call's answer, in the caller's format (see TextRequest.wire); then only `usage` beside it is read. */
  wireBody?: unknown;
  /** `wireBody` exactly as the upstream wrote it (its bytes), when nothing in it was changed: sent as it came. */
  wireBytes?: Uint8Array;
}

/** The error event a stream that broke off ends with (the gateway's own message, never the upstream's). */
export type StreamError = Extract<TextStreamEvent, { type: 'error' }>;

/** A streamed piece: text deltas, then one final piece with the finish and the usage. */
export type TextChunk =
  | { type: 'delta'; text: string }
  /**
   * A same-format upstream's whole events, as bytes to write at once (a wire call's, see
   * TextRequest.wire). `text()` reads the text of every events chunk of the stream so far, this
   * one's included: the text service keeps only the last chunk, and reads it only when the stream
   * ended without the upstream's usage.
   */
  | {
      type: 'events';
      parts: Buffer[];
      text(): string;
      /**
       * A forwarded Responses stream says itself where its whole answer is: the Response its
       * response.completed (or .incomplete) event carried, or null in every chunk before it, so the
       * route need not search the bytes again. Undefined: not said (the route reads the events).
       */
      answer?: unknown;
      /**
       * The events that tell the caller its stream broke off after this chunk, in its format and
       * going on from the events it got (a Responses stream numbers them and names its response).
       * Absent: the route writes its format's error event alone.
       */
      broken?(error: StreamError): string;
    }
  | { type: 'end'; finish: FinishReason; stopSequence: string | null; usage: TextUsage }
  /**
   * What the upstream reported of the usage so far (a messages stream's message_start): what the
   * call pays if the stream breaks off before its end. Read by the text service, never sent on.
   */
  | { type: 'usage'; usage: ReportedUsage };

export interface TextProvider {
  generate(request: TextRequest, signal: CallSignal): Promise<TextResult>;
  stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk>;
  /** The upstream's own count of a prompt (the Gemini API's countTokens), where it has one. */
  countTokens?(request: TextRequest, signal: CallSignal): Promise<number>;
  /** Answers wire calls itself (TextRequest.wire); others get them through wire-legacy.ts. */
  readonly speaksWire?: boolean;
  /**
   * Whether the upstream keeps what it answers to `request` (the OpenAI API's own /v1/responses,
   * sent the caller's body without `store: false`), so that a follow-up naming the answer's id by
   * previous_response_id can be sent to it as the caller writes it.
   */
  keepsConversation?(request: TextRequest): boolean;
}

/** An upstream that cannot be reached or answered 5xx before the first byte: another channel may try. */
export class TextUpstreamUnavailable extends Error {}

/**
 * The upstream no longer keeps the response a follow-up names (expired, or the channel's key moved
 * to another organisation): the same channel can still take the conversation whole.
 */
export class ConversationNotKept extends TextUpstreamUnavailable {}
