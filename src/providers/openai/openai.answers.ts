// The OpenAI Images API's answers as the official SDK types them (openai@6 resources/images.ts,
// ImagesResponse; errors as {error: {message, type, param, code}}). Nothing checks an answer against
// these shapes on the way in: every field is optional, and the code still checks the type of each
// field where a wrong one would matter.

export interface OpenAIErrorBody {
  message?: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

/** POST /v1/images/generations and /v1/images/edits. */
export interface ImagesAnswer {
  created?: number;
  data?: { b64_json?: string; url?: string; revised_prompt?: string }[];
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number };
  error?: OpenAIErrorBody;
}
