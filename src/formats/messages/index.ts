// The messages wire format (Anthropic `/v1/messages`): request, answer and stream codecs.
export { decodeRequest } from './decode-request.ts';
export { encodeRequest, DEFAULT_MAX_TOKENS } from './encode-request.ts';
export { decodeAnswer, encodeAnswer } from './answer.ts';
export { MessagesStreamDecoder as StreamDecoder, MessagesStreamEncoder as StreamEncoder } from './stream.ts';
