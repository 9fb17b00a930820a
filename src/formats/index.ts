// The four wire formats behind one interface, so a route or a provider picks its codec by name.
import { UntranslatableField, type Json, type StreamDecoder, type StreamEncoder, type TextAnswer, type TextRequest, type WireFormat } from '../core/text/index.ts';
import * as messages from './messages/index.ts';
import * as chat from './chat/index.ts';
import * as responses from './responses/index.ts';
import * as gemini from './gemini/index.ts';
import { responsesEcho } from './responses/echo.ts';
import { hostedIn } from './web-search.ts';

export interface FormatCodec {
  /** `model` names the model where the format keeps it outside the body (Gemini's URL path). */
  decodeRequest(body: unknown, model?: string): TextRequest;
  encodeRequest(req: TextRequest, targetModel: string): Json;
  decodeAnswer(body: unknown): TextAnswer;
  /** `req`: the caller's request, for the settings an answer shows back (the Response object's). */
  encodeAnswer(answer: TextAnswer, req?: TextRequest): Json;
  streamDecoder(): StreamDecoder;
  /** `req`: the caller's request, for what the stream must echo or include (chat's usage chunk). */
  streamEncoder(req?: TextRequest): StreamEncoder;
}

/** A tool that runs on another vendor's servers goes as `format`'s own where it has one (web-search.ts); else refused, not dropped. */
const ownTools = (format: WireFormat, encode: FormatCodec['encodeRequest']): FormatCodec['encodeRequest'] => (req, targetModel) => {
  if (!req.hostedTools?.some((h) => h.format !== format)) return encode(req, targetModel);
  const hostedTools = req.hostedTools.map((h) => {
    const own = hostedIn(h, format);
    if (!own) throw new UntranslatableField(h.field, h.reason);
    return own;
  });
  return encode({ ...req, hostedTools }, targetModel);
};

/**
 * Content only the caller's format has was left out of the neutral request: an upstream of that format
 * gets the body as it came; encoding the request (for any format) would lose it, so it is refused.
 */
const whole = (encode: FormatCodec['encodeRequest']): FormatCodec['encodeRequest'] => (req, targetModel) => {
  const left = req.untranslatable?.[0];
  if (left) throw new UntranslatableField(left.field, left.reason);
  return encode(req, targetModel);
};

export const FORMATS: Record<WireFormat, FormatCodec> = {
  messages: {
    decodeRequest: (b) => messages.decodeRequest(b),
    encodeRequest: whole(ownTools('messages', messages.encodeRequest)),
    decodeAnswer: messages.decodeAnswer,
    encodeAnswer: messages.encodeAnswer,
    streamDecoder: () => new messages.StreamDecoder(),
    streamEncoder: () => new messages.StreamEncoder(),
  },
  chat: {
    decodeRequest: (b) => chat.decodeRequest(b),
    encodeRequest: whole(ownTools('chat', chat.encodeRequest)),
    decodeAnswer: chat.decodeAnswer,
    encodeAnswer: chat.encodeAnswer,
    streamDecoder: () => new chat.StreamDecoder(),
    streamEncoder: (req) => new chat.StreamEncoder(req?.streamUsage === true),
  },
  responses: {
    decodeRequest: (b) => responses.decodeRequest(b),
    encodeRequest: whole(ownTools('responses', responses.encodeRequest)),
    decodeAnswer: responses.decodeAnswer,
    encodeAnswer: (a, req) => responses.encodeAnswer(a, req ? responsesEcho(req) : {}),
    streamDecoder: () => new responses.StreamDecoder(),
    streamEncoder: (req) => new responses.StreamEncoder(req ? responsesEcho(req) : {}),
  },
  gemini: {
    decodeRequest: gemini.decodeRequest,
    encodeRequest: whole(ownTools('gemini', gemini.encodeRequest)),
    decodeAnswer: gemini.decodeAnswer,
    encodeAnswer: gemini.encodeAnswer,
    streamDecoder: () => new gemini.StreamDecoder(),
    streamEncoder: () => new gemini.StreamEncoder(),
  },
};
