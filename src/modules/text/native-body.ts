import type { preValidationHookHandler } from 'fastify';
import { badRequest } from '../../core/errors.ts';
import { jsonFieldNames } from '../../formats/gemini/field-names.ts';
import type { GenerateContentRequest, NativeRequest } from './native.schemas.ts';

// The body of a call on the Gemini-format surfaces (our /v1beta and /gemini/v1beta), before and
// after the route's schema reads it.

/**
 * Proto field names (`system_instruction`, `inline_data`, ...) renamed to the JSON names the schema,
 * the hold and the codecs read. A renamed body is the one that goes upstream, not the caller's
 * bytes: a Gemini upstream then reads the very fields the hold was sized from.
 */
export const protoFieldNames: preValidationHookHandler = (request, _reply, done) => {
  try {
    const body = request.body;
    const renamed = jsonFieldNames(body);
    if (renamed !== body) {
      request.body = renamed;
      request.jsonBytes = undefined;
    }
    done();
  } catch (err) {
    done(err as Error);
  }
};

/**
 * The generateContent body a call is about. countTokens takes either `contents` alone or a whole
 * body in `generateContentRequest` (what @google/generative-ai always sends), never both; the other
 * methods need `contents` (a `generateContentRequest` beside it is not theirs to read).
 */
export function promptBody(method: string, body: NativeRequest): GenerateContentRequest {
  const whole = body.generateContentRequest;
  if (method === 'countTokens') {
    if (whole && body.contents) throw badRequest('countTokens takes contents or generateContentRequest, not both');
    if (whole) return whole;
  }
  if (!body.contents) throw badRequest(method === 'countTokens' ? 'countTokens needs contents or generateContentRequest' : "body must have required property 'contents'");
  return body as GenerateContentRequest;
}
