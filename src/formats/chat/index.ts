// The chat wire format (OpenAI `/v1/chat/completions`): request, answer and stream codecs.
export { decodeRequest } from './decode-request.ts';
export { encodeRequest } from './encode-request.ts';
export { decodeAnswer, encodeAnswer } from './answer.ts';
export { ChatStreamDecoder as StreamDecoder, ChatStreamEncoder as StreamEncoder } from './stream.ts';
