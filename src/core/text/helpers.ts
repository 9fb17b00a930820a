// Small shared rules of the translators: where instructions go, how efforts and budgets correspond,
// how data URLs split, and how a tool result finds its function's name.
import type { ContentPart, MediaSource, TextPart } from './parts.ts';
import type { ReasoningEffort, TextMessage } from './request.ts';

/** The leading system/developer turns (instructions up front) and the conversation after them. */
export const splitLeadingSystem = (messages: TextMessage[]): { system: TextMessage[]; rest: TextMessage[] } => {
  let i = 0;
  while (i < messages.length && (messages[i].role === 'system' || messages[i].role === 'developer')) i++;
  return { system: messages.slice(0, i), rest: messages.slice(i) };
};

export const isInstruction = (m: TextMessage): boolean => m.role === 'system' || m.role === 'developer';

export const textOf = (parts: ContentPart[]): string =>
  parts.filter((p): p is TextPart => p.type === 'text').map((p) => p.text).join('');

/** The budget a format without efforts gets for an effort, and back: the same buckets both ways. */
const EFFORT_BUDGET: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
  max: 65536,
};

export const budgetForEffort = (effort: ReasoningEffort): number => EFFORT_BUDGET[effort];

export const effortForBudget = (budget: number): ReasoningEffort => {
  if (budget <= 0) return 'none';
  if (budget <= 1024) return 'minimal';
  if (budget <= 4096) return 'low';
  if (budget <= 16384) return 'medium';
  return 'high';
};

export const parseDataUrl = (url: string): { mediaType: string; data: string } | undefined => {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : undefined;
};

export const dataUrl = (source: Extract<MediaSource, { kind: 'base64' }>): string => `data:${source.mediaType};base64,${source.data}`;

/** A source from a URL field: data URLs become inline bytes, anything else stays a URL. */
export const sourceFromUrl = (url: string, mediaType?: string): MediaSource => {
  const d = parseDataUrl(url);
  return d ? { kind: 'base64', ...d } : { kind: 'url', url, ...(mediaType ? { mediaType } : {}) };
};

/** The name of the function a call id belongs to, from the calls earlier in the conversation. */
export const toolNamesById = (messages: TextMessage[]): Map<string, string> => {
  const names = new Map<string, string>();
  for (const m of messages) for (const p of m.content) if (p.type === 'tool_call') names.set(p.id, p.name);
  return names;
};

/** False for arguments cut off before their JSON ended (an upstream that stopped for max tokens mid-call). */
export const argumentsComplete = (json: string): boolean => {
  if (json.trim() === '') return true;
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
};

/** Parses a call's JSON arguments into the object formats that carry objects; `{}` for empty text. */
export const argumentsObject = (json: string): Record<string, unknown> => {
  if (json.trim() === '') return {};
  try {
    const v = JSON.parse(json) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw: json };
  }
};

/** Appends a part to the last message when it has the same role, else opens a new message. */
export const pushPart = (messages: TextMessage[], role: TextMessage['role'], part: ContentPart): void => {
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(part);
  else messages.push({ role, content: [part] });
};

/** How a free-text tool looks to formats without one: an object with the text in `input`. */
export const CUSTOM_TOOL_PARAMETERS: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: { input: { type: 'string', description: 'The tool input, as free text' } },
  required: ['input'],
});

export const customArguments = (input: string): string => JSON.stringify({ input });

/** The free text of a free-text call, from `{"input": ...}` arguments (raw text if they are not that). */
export const customInput = (args: string): string => {
  const o = argumentsObject(args);
  return typeof o.input === 'string' ? o.input : args;
};
