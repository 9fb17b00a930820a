// The neutral text request: every field that at least one of the four wire formats expresses and that
// can change an answer. Formats decode into it and encode out of it; none reads another's wire shape.
import type { ContentPart, WireFormat } from './parts.ts';

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
  /**
   * The Responses namespace tool it was declared in (a client-side group of function and custom
   * tools; calls to it name the namespace). Other formats see the tools ungrouped.
   */
  namespace?: { name: string; description: string };
}

/**
 * A tool that runs on one vendor's servers (Responses web_search, ...), kept as that format wrote
 * it: its format forwards it, no other format has it, and the simulator does not run it.
 */
export interface HostedTool {
  format: WireFormat;
  tool: Record<string, unknown>;
  /** Where it stood in the caller's body (`tools[4]`), for the 400 of a translation. */
  field: string;
  /** Why no other format has it. */
  reason: string;
}

/** Where the caller's body holds something the neutral model does not, and why no other format has it. */
export interface Untranslatable {
  field: string;
  reason: string;
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
  hostedTools?: HostedTool[];
  /**
   * What the caller's body holds that only its own format expresses (a server tool's blocks in the
   * history, an item reference, ...): it reaches an upstream of that format in the body as it came;
   * any encoding of this request would lose it, so every translation refuses it.
   */
  untranslatable?: Untranslatable[];
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
  /**
   * The previous response the route resolved: its conversation is now in `messages`, so no upstream
   * is sent the id (none holds that conversation), but the answer still names it.
   */
  continuedFrom?: string;
}
