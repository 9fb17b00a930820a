// What a strict fake answers when a test scripts it: a vendor-neutral list of answer parts that each
// fake writes in its own format (messages content blocks, Responses output items, chat tool_calls,
// Gemini parts). A script gets the parsed request body; returning undefined keeps the fake's default
// answer (`echo: <last user text>`).

export type ScriptedPart =
  | { type: 'text'; text: string }
  /** `id` defaults to a fresh vendor-style id; `input` is the call's arguments object. */
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string }
  /** Reasoning: a thinking block, a reasoning item (summary and encrypted_content), a thought part. */
  | { type: 'thinking'; thinking: string; signature?: string };

export type Script = (body: any) => ScriptedPart[] | undefined;

/** Splits text into the pieces a stream sends (a word and its trailing space each). */
export const pieces = (text: string): string[] => (text === '' ? [''] : text.split(/(?<= )/));

/** Splits JSON into two halves, as vendors stream tool arguments in fragments. */
export const halves = (json: string): string[] => (json.length < 2 ? [json] : [json.slice(0, json.length >> 1), json.slice(json.length >> 1)]);
