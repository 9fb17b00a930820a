import { badRequest } from '../../core/errors.ts';
import { promptTokens as promptOf } from '../../core/usage.ts';
import type { GenerateContentRequest } from './native.schemas.ts';
import type { FinishReason, TextMessage, TextPart, TextRequest, TextUsage } from '../../core/text/provider.ts';
import { IMAGE_TOKENS } from '../../lib/tokens/tokens.ts';

// The native content/parts format <-> the neutral text request and the native response.

export const DEFAULT_MAX_OUTPUT = 8192;
const CATEGORIES = ['HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_SEXUALLY_EXPLICIT', 'HARM_CATEGORY_DANGEROUS_CONTENT'];
const safe = () => CATEGORIES.map((category) => ({ category, probability: 'NEGLIGIBLE' }));

function parts(raw: GenerateContentRequest['contents'][number]['parts'], where: string): TextPart[] {
  return raw.map((part, i) => {
    if (typeof part.text === 'string') return { type: 'text' as const, text: part.text };
    if (part.inlineData) {
      if (!part.inlineData.mimeType.startsWith('image/')) throw badRequest(`${where}.parts[${i}].inlineData.mimeType must be an image type`);
      return { type: 'image' as const, mediaType: part.inlineData.mimeType, data: part.inlineData.data };
    }
    throw badRequest(`${where}.parts[${i}] needs text or inlineData`);
  });
}

export function fromNative(model: string, body: GenerateContentRequest): TextRequest {
  const messages: TextMessage[] = body.contents.map((content, i) => {
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model') throw badRequest(`contents[${i}].role must be user or model`);
    return { role: role === 'model' ? 'assistant' : 'user', parts: parts(content.parts, `contents[${i}]`) };
  });
  const system = body.systemInstruction?.parts.map((p) => p.text ?? '').join('\n') || undefined;
  const config = body.generationConfig ?? {};
  return {
    model,
    system,
    messages,
    maxTokens: config.maxOutputTokens ?? DEFAULT_MAX_OUTPUT,
    temperature: config.temperature,
    stopSequences: config.stopSequences,
    passthrough: { generationConfig: body.generationConfig, safetySettings: body.safetySettings, systemInstruction: body.systemInstruction },
  };
}

const FINISH: Record<FinishReason, string> = { stop: 'STOP', stop_sequence: 'STOP', max_tokens: 'MAX_TOKENS', tool_calls: 'STOP' };

function usageMetadata(request: TextRequest, usage: TextUsage) {
  const images = request.messages.flatMap((m) => m.parts).filter((p) => p.type === 'image').length;
  // The Gemini format counts cached tokens inside the prompt and thinking beside the candidates.
  const prompt = promptOf(usage);
  const thoughts = Math.min(usage.reasoning ?? 0, usage.output);
  const imageTokens = Math.min(prompt, images * IMAGE_TOKENS);
  const details = [{ modality: 'TEXT', tokenCount: prompt - imageTokens }];
  if (images > 0) details.push({ modality: 'IMAGE', tokenCount: imageTokens });
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: usage.output - thoughts,
    totalTokenCount: prompt + usage.output,
    thoughtsTokenCount: thoughts,
    ...(usage.cache_read > 0 ? { cachedContentTokenCount: usage.cache_read } : {}),
    promptTokensDetails: details,
  };
}

/** The native response, for a whole reply or for one streamed chunk (finish and usage only on the last). */
export function nativeResponse(request: TextRequest, text: string, end?: { finish: FinishReason; usage: TextUsage }) {
  return {
    candidates: [
      {
        content: { role: 'model', parts: [{ text }] },
        ...(end ? { finishReason: FINISH[end.finish] } : {}),
        index: 0,
        safetyRatings: safe(),
      },
    ],
    promptFeedback: { safetyRatings: safe() },
    ...(end ? { usageMetadata: usageMetadata(request, end.usage) } : {}),
  };
}
