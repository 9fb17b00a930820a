// The responses wire format (OpenAI `/v1/responses`): request, answer and stream codecs.
export { decodeRequest } from './decode-request.ts';
export { encodeRequest } from './encode-request.ts';
export { decodeAnswer, encodeAnswer, responseIdsOfItem } from './answer.ts';
export { ResponsesStreamDecoder as StreamDecoder } from './stream-decode.ts';
export { ResponsesStreamEncoder as StreamEncoder } from './stream-encode.ts';
