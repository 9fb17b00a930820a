// Thinking settings as a messages API model takes them. Anthropic's models differ: those before
// Claude 4.6 think only with a budget (`enabled` + `budget_tokens`) and refuse `adaptive` and
// `output_config.effort`; Opus 4.6 and Sonnet 4.6 take both; Opus 4.7 and every later model
// (Claude 5, Fable, Mythos) refuse a budget ("thinking.type.enabled is not supported for this
// model"). A caller of another format says only how hard to think, so the setting is written in the
// shape the target model takes. A model id we cannot read (a fine-tune, a proxy's alias) gets the
// setting as it was asked for, and its upstream judges it.
import { budgetForEffort, effortForBudget, type Json, type ReasoningEffort, type TextRequest } from '../../core/text/index.ts';

export type ThinkingStyle = 'budget' | 'both' | 'adaptive' | 'unknown';

/** Anthropic's ids (`claude-sonnet-4-5-20250929`, `claude-3-7-sonnet-latest`), Bedrock's and Vertex's carry them too. */
const NAMED_FIRST = /claude-(opus|sonnet|haiku|fable|mythos)(?:-(\d+)(?:[-.](\d)(?!\d))?)?/;
const VERSION_FIRST = /claude-(\d)(?:[-.](\d))?-(opus|sonnet|haiku)/;

export function thinkingStyleOf(model: string): ThinkingStyle {
  const id = model.toLowerCase();
  if (VERSION_FIRST.test(id) || /claude-(instant|2)\b/.test(id)) return 'budget';
  const named = NAMED_FIRST.exec(id);
  if (!named) return 'unknown';
  if (named[1] === 'fable' || named[1] === 'mythos') return 'adaptive';
  if (named[2] === undefined) return 'unknown';
  const version = Number(named[2]) + Number(named[3] ?? 0) / 10;
  return version < 4.6 ? 'budget' : version < 4.7 ? 'both' : 'adaptive';
}

/** output_config.effort's values; the neutral `minimal` is the lowest of them. */
const effortOf = (effort: ReasoningEffort | undefined): string | undefined => (effort === 'minimal' ? 'low' : effort === 'none' ? undefined : effort);

/**
 * Anthropic refuses thinking together with a forced tool call, and in a tool-using turn that did not start
 * with its signed thinking: the call and the turn are what the caller's answer must contain, so thinking
 * is turned off (the effort still guides the answer where the model takes one).
 */
export function thinkingFor(req: TextRequest, maxTokens: number, unsignedTurn: boolean, model: string): { thinking?: Json; output_config?: Json; max_tokens: number } {
  const t = req.thinking;
  if (!t) return { max_tokens: maxTokens };
  const style = thinkingStyleOf(model);
  const withEffort = (effort: string | undefined) => (effort && style !== 'budget' ? { output_config: { effort } } : {});
  const forced = req.toolChoice?.type === 'required' || req.toolChoice?.type === 'tool' || unsignedTurn;
  if (forced && t.mode !== 'disabled') return { thinking: { type: 'disabled' }, ...withEffort(effortOf(t.effort)), max_tokens: maxTokens };
  if (t.mode === 'disabled' || t.effort === 'none' || t.budgetTokens === 0) return { thinking: { type: 'disabled' }, max_tokens: maxTokens };
  const mode = t.mode === 'adaptive' && style === 'budget' ? 'enabled' : t.mode === 'enabled' && style === 'adaptive' ? 'adaptive' : t.mode;
  if (mode === 'adaptive') {
    const effort = effortOf(t.effort ?? (t.budgetTokens !== undefined ? effortForBudget(t.budgetTokens) : undefined));
    return { thinking: { type: 'adaptive' }, ...withEffort(effort), max_tokens: maxTokens };
  }
  const budget = Math.max(1024, t.budgetTokens ?? budgetForEffort(t.effort ?? 'medium'));
  // Anthropic counts thinking inside max_tokens and wants room left for the answer.
  return { thinking: { type: 'enabled', budget_tokens: budget }, max_tokens: budget >= maxTokens ? budget + maxTokens : maxTokens };
}
