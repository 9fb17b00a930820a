// Content parts of the neutral text model: what any of the four wire formats can carry inside a turn.

/** Which wire format minted an opaque value (a thinking signature, encrypted reasoning): only that format can check it. */
export type WireFormat = 'messages' | 'chat' | 'responses' | 'gemini';

/** Where the bytes of an image or document are: inline base64 or a URL the vendor fetches. */
export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string; mediaType?: string }
  /** A vendor's uploaded file: only the format that issued the id can use it. */
  | { kind: 'file'; fileId: string; format: WireFormat; mediaType?: string };

export interface TextPart {
  type: 'text';
  text: string;
  /** A prompt-cache breakpoint after this part (messages `cache_control`). */
  cache?: { ttl?: '5m' | '1h' };
  /** A Gemini thought signature carried on this part. */
  signature?: OpaqueValue;
}

export interface ImagePart {
  type: 'image';
  source: MediaSource;
  detail?: 'auto' | 'low' | 'high' | 'original';
  cache?: { ttl?: '5m' | '1h' };
}

export interface DocumentPart {
  type: 'document';
  source: MediaSource;
  filename?: string;
  title?: string;
  cache?: { ttl?: '5m' | '1h' };
}

/** A call the model made; `arguments` is JSON text exactly as the model wrote it. */
export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
  /** A Gemini thought signature that must travel back with this call. */
  signature?: OpaqueValue;
  cache?: { ttl?: '5m' | '1h' };
  /** A call of a free-text tool: `arguments` is `{"input": text}`. */
  custom?: boolean;
}

/** What the caller's tool returned for one call. */
export interface ToolResultPart {
  type: 'tool_result';
  callId: string;
  /** The called function's name, when the format names it (Gemini needs it). */
  name?: string;
  content: Array<TextPart | ImagePart | DocumentPart>;
  isError?: boolean;
  cache?: { ttl?: '5m' | '1h' };
}

export interface OpaqueValue {
  format: WireFormat;
  value: string;
  /** The vendor's id of the item the value belongs to, when the format needs both back (responses reasoning). */
  id?: string;
}

/** Thinking (messages, Gemini thoughts) or reasoning (responses items). */
export interface ThinkingPart {
  type: 'thinking';
  text: string;
  /** The vendor's proof or encrypted state for this block; only its own format may receive it. */
  signature?: OpaqueValue;
  /** A block whose text the vendor withheld (messages `redacted_thinking`): only `signature` remains. */
  redacted?: boolean;
  /** The vendor's own id of the item (responses reasoning items). */
  itemId?: string;
}

export type ContentPart = TextPart | ImagePart | DocumentPart | ToolCallPart | ToolResultPart | ThinkingPart;
export type ToolResultContent = ToolResultPart['content'][number];
