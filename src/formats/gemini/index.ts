// The gemini wire format (generateContent / streamGenerateContent): request, answer and stream codecs.
export { decodeRequest } from './decode-request.ts';
export { encodeRequest } from './encode-request.ts';
export { decodeAnswer, encodeAnswer } from './answer.ts';
export { GeminiStreamDecoder as StreamDecoder, GeminiStreamEncoder as StreamEncoder } from './stream.ts';

/** Gemini keeps the model and the stream flag in the URL, not the body. */
export const geminiPath = (model: string, stream: boolean): string =>
  `/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
