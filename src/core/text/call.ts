// A text call as it arrived on one of the four wire surfaces: the caller's own body, what it says in
// the neutral model, and the vendor headers that change its meaning. Providers forward `body` to an
// upstream that speaks `format` (same format, same bytes but the model) and translate `request`
// for any other; either way the answer goes back in `format`.
import type { Json } from './read.ts';
import type { WireFormat } from './parts.ts';
import type { TextRequest } from './request.ts';

export interface WireCall {
  format: WireFormat;
  /** The caller's body as parsed; only the model is changed before it goes upstream. */
  body: Json;
  /** The bytes `body` was parsed from, where it came as JSON and was not changed: sent as they are when the model stays. */
  bytes?: Uint8Array;
  request: TextRequest;
  /** The model the caller asked for (answers name it, whatever the channel maps it to). */
  model: string;
  /**
   * The gateway changed `request` after decoding it (a stored conversation put before a Responses
   * follow-up): `body` no longer says it all, so even a same-format upstream gets `request` encoded.
   */
  rewritten?: boolean;
  /** `anthropic-version`, `anthropic-beta`, `openai-beta` as the caller sent them. */
  headers: Record<string, string>;
}

/** The vendor headers that go upstream with a same-format body, by the format that defines them. */
export const FORWARDED_HEADERS: Record<WireFormat, readonly string[]> = {
  messages: ['anthropic-version', 'anthropic-beta'],
  chat: ['openai-beta'],
  responses: ['openai-beta'],
  gemini: [],
};
