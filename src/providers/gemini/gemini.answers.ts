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
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
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
