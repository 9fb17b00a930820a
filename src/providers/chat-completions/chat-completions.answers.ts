import { reportedTokens, type ReportedUsage } from '../../lib/tokens/tokens.ts';

// The chat-completions answers as the openai SDK types them (ChatCompletion, ChatCompletionChunk,
// CompletionUsage; errors as {error: {message, type, code}}). Nothing checks one against these
// shapes on the way in (JSON.parse hands back whatever came): every field is optional but usage's
// two counts, which the SDK types as always there; the code still checks the type of each field
// where a wrong one would matter.

export interface ChatUsage {
  /** Every prompt token, the cached ones included. */
  prompt_tokens: number;
  /** Every produced token, reasoning included. */
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** A usage object's classes: the cached tokens are a part of prompt_tokens, so the input is the rest. */
export function chatClasses(usage: ChatUsage): ReportedUsage {
  const prompt = reportedTokens(usage.prompt_tokens);
  const cached = Math.min(reportedTokens(usage.prompt_tokens_details?.cached_tokens) ?? 0, prompt ?? Infinity);
  return {
    input: prompt === undefined ? undefined : prompt - cached,
    cache_read: cached,
    output: reportedTokens(usage.completion_tokens),
    reasoning: reportedTokens(usage.completion_tokens_details?.reasoning_tokens),
  };
}

export interface ChatErrorBody {
  message?: string;
  type?: string;
  code?: string | null;
}

/** POST /v1/chat/completions without streaming. */
export interface ChatCompletion {
  choices?: { message?: { content?: string | null; tool_calls?: unknown[] }; finish_reason?: string }[];
  usage?: ChatUsage;
}

/** One `data:` event of a stream; the last carries only usage (stream_options.include_usage). */
export interface ChatChunk {
  choices?: { delta?: { content?: string | null; tool_calls?: unknown[] }; finish_reason?: string | null }[];
  usage?: ChatUsage | null;
  error?: ChatErrorBody;
}
