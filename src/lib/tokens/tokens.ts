import type { ReportedUsage, UsageClasses } from '../../core/usage.ts';
export type { ReportedUsage };
import { imageTokens } from './image-tokens.ts';
import { countText } from './token-count.ts';
import type { TextMessage, TextRequest } from '../../core/text/provider.ts';

// Token counts for billing when an upstream reports none, and for the simulator: a real BPE
// tokenizer from npm (token-count.ts); an image counts by its size (image-tokens.ts). A prompt is
// everything sent upstream: system, messages and what a chat caller sends besides them (tool
// definitions, tool turns, response_format: `promptExtra`).

/** The tokens of the smallest image (one Gemini tile). */
export const IMAGE_TOKENS = 258;

// One call asks for its prompt's count several times (the hold, the stream's first event, an
// upstream without usage, the simulator), through copies of the request that share its messages:
// the count is kept per messages array, which nothing changes after parsing.
const counted = new WeakMap<TextMessage[], { system: string | undefined; extra: string | undefined; tokens: number }>();

// Chat clients send the whole conversation (and the same system prompt) on every turn: the count
// of each text seen recently is kept, bounded in entries and in characters (cleared when full: the
// map keeps its texts alive).
const textCounts = new Map<string, number>();
const MAX_TEXTS = 10_000;
const MAX_CACHED_UNITS = 16 * 1024 * 1024;
const MAX_CACHED_TEXT = 1024 * 1024;
let cachedUnits = 0;

function remember(text: string, tokens: number): void {
  if (text.length > MAX_CACHED_TEXT) return;
  if (textCounts.size >= MAX_TEXTS || cachedUnits + text.length > MAX_CACHED_UNITS) {
    textCounts.clear();
    cachedUnits = 0;
  }
  textCounts.set(text, tokens);
  cachedUnits += text.length;
}

function countCached(text: string): number {
  let tokens = textCounts.get(text);
  if (tokens === undefined) {
    tokens = countText(text);
    remember(text, tokens);
  }
  return tokens;
}

/** What is left to count of a prompt: the tokens already known (seen texts, images) and the texts that are not. */
export interface Uncounted {
  known: number;
  texts: string[];
  /** The UTF-16 units of `texts`. */
  units: number;
}

/** The prompt's count when known, else what is left to count (nothing is counted here). */
type Prompt = Pick<TextRequest, 'system' | 'messages' | 'promptExtra'>;

export function uncounted(request: Prompt): number | Uncounted {
  const whole = counted.get(request.messages);
  if (whole && whole.system === request.system && whole.extra === request.promptExtra) return whole.tokens;
  const left: Uncounted = { known: 0, texts: [], units: 0 };
  const add = (text: string) => {
    const tokens = textCounts.get(text);
    if (tokens !== undefined) left.known += tokens;
    else {
      left.texts.push(text);
      left.units += text.length;
    }
  };
  if (request.system) add(request.system);
  if (request.promptExtra) add(request.promptExtra);
  for (const message of request.messages) {
    for (const part of message.parts) {
      if (part.type === 'text') add(part.text);
      else left.known += imageTokens(part.data);
    }
  }
  return left;
}

/** Keeps the counts of a prompt counted elsewhere (the token thread): `counts` are those of `left.texts`. */
export function rememberPrompt(request: Prompt, left: Uncounted, counts: number[]): number {
  let tokens = left.known;
  left.texts.forEach((text, i) => {
    tokens += counts[i]!;
    remember(text, counts[i]!);
  });
  counted.set(request.messages, { system: request.system, extra: request.promptExtra, tokens });
  return tokens;
}

/**
 * The prompt's count, counted here on the event loop where not known: for prompts that are small
 * or were sized already (prompt-size.ts does the sizing before any money moves).
 */
export function promptTokens(request: Prompt): number {
  const known = counted.get(request.messages);
  if (known && known.system === request.system && known.extra === request.promptExtra) return known.tokens;
  let tokens = request.system ? countCached(request.system) : 0;
  if (request.promptExtra) tokens += countCached(request.promptExtra);
  for (const message of request.messages) {
    for (const part of message.parts) tokens += part.type === 'text' ? countCached(part.text) : imageTokens(part.data);
  }
  counted.set(request.messages, { system: request.system, extra: request.promptExtra, tokens });
  return tokens;
}

export const textTokens = (text: string) => countText(text);

/** An upstream's token count when it is one (a non-negative integer); else undefined, and ours is used. */
export function reportedTokens(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}


/**
 * A call's usage: each class the upstream reported, our count where it reported none: the prompt
 * (less what it said was cached) and what was produced (text and tool-call arguments).
 */
export function usageOf(reported: ReportedUsage | undefined, request: Prompt, produced: string | (() => string)): UsageClasses {
  const cache_read = reported?.cache_read ?? 0;
  const cache_write = reported?.cache_write ?? 0;
  const input = reported?.input ?? Math.max(0, promptTokens(request) - cache_read - cache_write);
  const output = reported?.output ?? textTokens(typeof produced === 'string' ? produced : produced());
  return reported?.reasoning !== undefined ? { input, cache_read, cache_write, output, reasoning: reported.reasoning } : { input, cache_read, cache_write, output };
}

/** Later counts of a stream over earlier ones (a class an event does not report keeps its earlier count). */
export function laterUsage(earlier: ReportedUsage | undefined, later: ReportedUsage): ReportedUsage {
  const out: ReportedUsage = { ...earlier };
  for (const [name, value] of Object.entries(later) as [keyof UsageClasses, number | undefined][]) if (value !== undefined) out[name] = value;
  return out;
}
