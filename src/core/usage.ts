// Usage of one text call by token class, the unit every adapter reports and every price reads.
// `input` is the uncached part of the prompt only: a vendor that counts cached tokens inside its
// prompt total (chat, responses, Gemini) is split by its adapter, so the classes never overlap.

export interface UsageClasses {
  /** Prompt tokens read at the full input price. */
  input: number;
  /** Prompt tokens served from the vendor's prompt cache. */
  cache_read: number;
  /** Prompt tokens written into the vendor's prompt cache. */
  cache_write: number;
  /** Produced tokens, reasoning and thinking included. */
  output: number;
  /** The reasoning or thinking part of `output`, shown for information, never billed twice. */
  reasoning?: number;
}

/** What an upstream reported of a call's usage, class by class (a class it did not report is undefined). */
export type ReportedUsage = Partial<UsageClasses>;

export const USAGE_CLASSES = ['input', 'cache_read', 'cache_write', 'output'] as const;
export type UsageClass = (typeof USAGE_CLASSES)[number];

export const NO_USAGE: Readonly<UsageClasses> = Object.freeze({ input: 0, cache_read: 0, cache_write: 0, output: 0 });

/** All prompt tokens of a call, whatever their class (what a long-context tier and an input limit count). */
export const promptTokens = (u: UsageClasses): number => u.input + u.cache_read + u.cache_write;
