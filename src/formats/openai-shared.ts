// What the two OpenAI formats (chat completions and responses) read and write alike: JSON output formats
// and reasoning efforts.
import {
  effortForBudget, obj, optBool, optStr, str, unknownType,
  type OutputFormat, type ReasoningEffort, type ThinkingSettings,
} from '../core/text/index.ts';

export const decodeOutputFormat = (v: unknown, field: string): OutputFormat | undefined => {
  if (v === undefined || v === null) return undefined;
  const r = obj(v, field);
  if (r.type === 'text') return undefined;
  if (r.type === 'json_object') return { type: 'json_object' };
  if (r.type !== 'json_schema') throw unknownType(`${field}.type`, r.type);
  const s = obj(r.json_schema, `${field}.json_schema`);
  const strict = optBool(s.strict, `${field}.json_schema.strict`);
  const description = optStr(s.description, `${field}.json_schema.description`);
  return {
    type: 'json_schema', name: str(s.name, `${field}.json_schema.name`), schema: s.schema === undefined ? {} : obj(s.schema, `${field}.json_schema.schema`),
    ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}),
  };
};

/** An OpenAI reasoning effort: `none` turns reasoning off, anything else lets the model think that hard. */
export const thinkingForEffort = (effort: string | undefined): ThinkingSettings | undefined =>
  effort === undefined ? undefined : effort === 'none' ? { mode: 'disabled', effort: 'none' } : { mode: 'adaptive', effort: effort as ReasoningEffort };

/**
 * The effort an OpenAI upstream is sent. Off goes as `none` only when the caller said `none` (an
 * OpenAI caller knows its model takes it); another format's off (Gemini's zero budget, which Gemini
 * CLI sends on its side calls) goes as no effort at all, since most OpenAI models refuse `none`.
 */
export const reasoningEffort = (t: ThinkingSettings | undefined): string | undefined => {
  if (!t) return undefined;
  if (t.mode === 'disabled' || t.budgetTokens === 0) return t.effort === 'none' ? 'none' : undefined;
  if (t.effort) return t.effort;
  return t.budgetTokens !== undefined ? effortForBudget(t.budgetTokens) : undefined;
};


/** File ids of the OpenAI Files API serve both OpenAI formats. */
export const OPENAI_FILES: readonly string[] = ['chat', 'responses'];
