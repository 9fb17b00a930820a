import { reportedTokens, type ReportedUsage } from '../../lib/tokens/tokens.ts';

// The Gemini API's answers as @google/genai types them (GenerateContentResponse, CountTokensResponse,
// the error envelope); native upstreams answer in the same format. Nothing checks an answer against
// these shapes on the way in (JSON.parse hands back whatever came): every field is optional, and the
// code still checks the type of each field where a wrong one would matter.

/** {error: {code, message, status, details}}; an invalid key is a detail with reason API_KEY_INVALID. */
export interface GeminiError {
  code?: number;
  message?: string;
  status?: string;
  details?: { '@type'?: string; reason?: string }[];
}

export interface GeminiPart {
  text?: string;
  /** A thinking model's draft (text or image), not the answer. */
  thought?: boolean;
  inlineData?: { mimeType?: string; data?: string };
}

export interface UsageMetadata {
  /** Every prompt token, the cached ones included. */
  promptTokenCount?: number;
  /** The part of the prompt served from a cached content. */
  cachedContentTokenCount?: number;
  /** The prompt of tool use (search results and such): input too. */
  toolUsePromptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
}

/** usageMetadata's classes: thinking is output (billed so by the Gemini API); undefined when it has no prompt count. */
export function geminiClasses(meta: UsageMetadata | undefined): ReportedUsage | undefined {
  const prompt = reportedTokens(meta?.promptTokenCount);
  if (prompt === undefined) return undefined;
  const cached = Math.min(reportedTokens(meta?.cachedContentTokenCount) ?? 0, prompt);
  const candidates = reportedTokens(meta?.candidatesTokenCount);
  const thoughts = reportedTokens(meta?.thoughtsTokenCount);
  return {
    input: prompt - cached + (reportedTokens(meta?.toolUsePromptTokenCount) ?? 0),
    cache_read: cached,
    // A prompt count without a candidates count (a cut stream's first event): the output is ours to count.
    output: candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0),
    reasoning: thoughts,
  };
}

/** generateContent's answer, and each event of streamGenerateContent. */
export interface GenerateContentAnswer {
  candidates?: { content?: { role?: string; parts?: GeminiPart[] }; finishReason?: string }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: UsageMetadata;
  /** A stream that fails ends with an event carrying only this. */
  error?: GeminiError;
}

/** countTokens' answer. */
export interface CountTokensAnswer {
  totalTokens?: number;
}

/** GET /v1beta/models/{model}: the model's description. */
export interface GeminiModel {
  name?: string;
  displayName?: string;
}
