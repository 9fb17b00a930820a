// The neutral text request: every field that at least one of the four wire formats expresses and that
// can change an answer. Formats decode into it and encode out of it; none reads another's wire shape.
import type { ContentPart } from './parts.ts';

/**
 * `system` and `developer` turns may appear anywhere; the formats that only take instructions up front
 * receive the leading ones there.
 */
export type TextRole = 'system' | 'developer' | 'user' | 'assistant';

export interface TextMessage {
  role: TextRole;
  content: ContentPart[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  strict?: boolean;
  /**
   * A tool that takes free text (Responses `custom` tools). `parameters` then wraps the text as
   * `{input: string}`, which is how every other format sees it.
   */
  custom?: { format?: Record<string, unknown> };
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ThinkingSettings {
  /** `enabled` with a budget, `adaptive` (the model decides, optionally guided by `effort`), or off. */
  mode: 'enabled' | 'adaptive' | 'disabled';
  budgetTokens?: number;
  effort?: ReasoningEffort;
  /** Whether the caller wants the thinking text back (Gemini includeThoughts, responses summary). */
  includeThoughts?: boolean;
  summary?: 'auto' | 'concise' | 'detailed';
}

export type OutputFormat =
  | { type: 'json_schema'; name?: string; description?: string; schema: Record<string, unknown>; strict?: boolean }
  | { type: 'json_object' };

export interface TextRequest {
  model: string;
  messages: TextMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  thinking?: ThinkingSettings;
  output?: OutputFormat;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  stream?: boolean;
  /** Whether a chat stream should end with a usage chunk (chat `stream_options.include_usage`). */
  streamUsage?: boolean;
  user?: string;
  metadata?: Record<string, string>;
  /** Responses-only conversation state, carried for the route to resolve. */
  store?: boolean;
  previousResponseId?: string;
}
