// The neutral answer of a text call, and the stop reasons every format maps to and from.
import type { UsageClasses } from '../usage.ts';
import type { TextPart, ThinkingPart, ToolCallPart } from './parts.ts';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export type AnswerPart = TextPart | ToolCallPart | ThinkingPart;

export interface TextAnswer {
  id: string;
  model: string;
  content: AnswerPart[];
  stopReason: StopReason;
  /** The stop sequence that ended the answer, when the vendor names it. */
  stopSequence?: string;
  usage: UsageClasses;
  /** Unix seconds, when the vendor stamped it. */
  created?: number;
}
