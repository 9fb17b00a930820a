import { reportedTokens, type ReportedUsage } from '../../lib/tokens/tokens.ts';

// The messages API's answers and stream events as the vendor's SDK types them (Message,
// RawMessageStreamEvent). Nothing checks one against these shapes on the way in (JSON.parse hands
// back whatever came): every field is optional, and the code still checks the type of each field
// where a wrong one would matter.

export interface MessagesUsage {
  /** The prompt tokens read uncached (null in a message_delta that does not repeat it). */
  input_tokens?: number | null;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A usage object's classes; message_delta's counts are cumulative and may leave some out (null). */
export function messagesClasses(usage: MessagesUsage | undefined): ReportedUsage {
  return {
    input: reportedTokens(usage?.input_tokens),
    cache_write: reportedTokens(usage?.cache_creation_input_tokens),
    cache_read: reportedTokens(usage?.cache_read_input_tokens),
    output: reportedTokens(usage?.output_tokens),
  };
}

/**
 * message_start's classes: its output_tokens is a placeholder (1, or the few tokens of a prefill),
 * not a count of the answer, which message_delta gives. Left out, a stream cut before its
 * message_delta bills our count of what it produced instead of that placeholder.
 */
export function messagesStartClasses(usage: MessagesUsage | undefined): ReportedUsage {
  const { output: _placeholder, ...prompt } = messagesClasses(usage);
  return prompt;
}

/** POST /v1/messages without streaming. */
export interface MessagesAnswer {
  id?: string;
  model?: string;
  content?: { type: string; text?: string }[];
  /** end_turn, max_tokens, stop_sequence, tool_use, ... */
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: MessagesUsage;
}

/** A content_block_delta's delta of type text_delta: its text is always there. */
export interface TextDelta {
  type: 'text_delta';
  text: string;
}

/** One event of a stream: its `type` says which of the other fields it has. */
export interface MessagesEvent {
  type?: string;
  /** message_start: the message so far (its id, model and input usage). */
  message?: MessagesAnswer;
  /** content_block_delta: {type: text_delta, text} (thinking_delta: thinking; input_json_delta: partial_json); message_delta: {stop_reason, stop_sequence}. */
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null; stop_sequence?: string | null };
  /** message_delta: the output so far. */
  usage?: MessagesUsage;
  /** error: what went wrong. */
  error?: { type?: string; message?: string };
}
