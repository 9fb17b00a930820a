import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard, pathModel } from '../accounts/key-guard.ts';
import { notFound, serviceUnavailable } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { declareSurface, GEMINI_SURFACE } from '../../http/surface.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import { fromNative, nativeResponse } from './native.mapping.ts';
import { NativeRequest, NativeResponse } from './native.schemas.ts';
import { promptBody, protoFieldNames } from './native-body.ts';
import type { TextCall } from './text-call.ts';
import { countPromptTokens, generateText, streamText } from './text.service.ts';
import type { TextChunk } from '../../core/text/provider.ts';
import type { Json } from '../../core/text/index.ts';
import { answerWire, wireTextCall } from './wire-call.ts';

const everyUpstreamUnavailable = () => serviceUnavailable('Every upstream for this model is unavailable');

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const;

const BODY_NAMES =
  'Body fields go by their JSON names (systemInstruction) or their proto names (system_instruction), as the Gemini API takes them; both spellings of one field are a 400. countTokens takes contents or generateContentRequest, exactly one.';

// Two surfaces share one handler: our own `/v1beta/...`, answers wrapped in {code: 200, data},
// and the Gemini API's own wire format under `/gemini/v1beta/...` (unwrapped), so the official
// Gemini SDK works with baseUrl `<gateway>/gemini`. Streamed chunks are bare on both.
type Shape = (data: unknown) => unknown;
const wrapped: Shape = (data) => ({ code: 200, data });
const bare: Shape = (data) => data;

export function nativeRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const querystring = Type.Object({ alt: Type.Optional(Type.String()), key: Type.Optional(Type.String()) }, { additionalProperties: true });
    const security: Record<string, string[]>[] = [{ bearer: [] }, { googApiKey: [] }];
    declareSurface(app, { envelope: 'native', keySources: ['bearer', 'x-goog-api-key', 'query'] });
    for (const [url, shape, summary, ok, config] of [
      ['/v1beta/models/*', wrapped, 'Native text: /v1beta/models/{model}:generateContent | :streamGenerateContent (?alt=sse) | :countTokens', Type.Object({ code: Type.Literal(200), data: Type.Unknown() }, { description: 'data: candidates, promptFeedback and usageMetadata' }), { callSurface: 'native' }],
      ['/gemini/v1beta/models/*', bare, 'The Gemini API surface (unwrapped answers): the official Gemini SDK with baseUrl <gateway>/gemini', Type.Unknown({ description: 'The Gemini API answer, not wrapped' }), { ...GEMINI_SURFACE, callSurface: 'gemini' }],
    ] as const) {
      app.post(
        url,
        {
          config,
          preValidation: [keyGuard(ctx, { model: pathModel }), protoFieldNames],
          schema: { tags: ['text'], summary, description: BODY_NAMES, security, querystring, body: NativeRequest, response: { 200: ok, ...ErrorResponses } },
        },
        async (request, reply) => {
          const target = (request.params as { '*': string })['*'];
          const at = target.lastIndexOf(':');
          const model = decodeURIComponent(at > 0 ? target.slice(0, at) : target);
          const method = at > 0 ? target.slice(at + 1) : '';
          if (!METHODS.includes(method as (typeof METHODS)[number])) throw notFound(`Unknown method "${method}": use ${METHODS.join(', ')}`);
          // The Gemini API's own surface: tools, thinking and every other field of that format, forwarded
          // to a gemini channel as they came, translated for the others. Without alt=sse a stream is
          // answered as the format's JSON array, here of one whole chunk.
          // The wrapped surface takes the same way a call with tools or tool turns (its own
          // text-and-images answer could not carry them), its whole answers wrapped.
          const body = promptBody(method, request.body as NativeRequest);
          if ((shape === bare || usesTools(body as Json)) && method !== 'countTokens') {
            const sse = method === 'streamGenerateContent' && (request.query as { alt?: string }).alt === 'sse';
            const surface = { format: 'gemini', body: body as Json, model, stream: sse, endpoint: 'native', allDown: everyUpstreamUnavailable, wrap: shape } as const;
            if (method === 'generateContent' || sse) return answerWire(ctx, request, reply, surface);
            const result = await generateText(ctx, await wireTextCall(request, surface), clientGone(reply));
            return shape([result.wireBody]);
          }
          if (method === 'countTokens') {
            // Counting tokens calls no model and costs nothing: not a call to log. A body with tools
            // or tool turns is counted as generateContent would size it (its tools too).
            request.callEntry?.skip();
            const counted = usesTools(body as Json) ? (await wireTextCall(request, { format: 'gemini', body: body as Json, model, stream: false, endpoint: 'native', allDown: everyUpstreamUnavailable })).request : fromNative(model, body);
            return shape({ totalTokens: await countPromptTokens(ctx, counted, request.apiKey!, clientGone(reply)) });
          }
          const text = fromNative(model, body);
          const call: TextCall = { key: request.apiKey!, endpoint: 'native', requestId: request.id, request: text, allDown: everyUpstreamUnavailable, log: request.callEntry, span: request.span };
          if (method === 'generateContent') {
            const result = await generateText(ctx, call, clientGone(reply));
            return shape(nativeResponse(text, result.text, result));
          }
          return stream(ctx, call, request, reply, (request.query as { alt?: string }).alt === 'sse', shape);
        },
      );
    }
    void NativeResponse;
  };
}

/** A Gemini body that offers tools or carries tool turns. */
const usesTools = (body: Json): boolean =>
  body.tools !== undefined || body.toolConfig !== undefined || (Array.isArray(body.contents) && body.contents.some((c) => Array.isArray((c as Json)?.parts) && ((c as Json).parts as Json[]).some((p) => p && (p.functionCall || p.functionResponse))));

const chunkOf = (call: TextCall, chunk: TextChunk) => (chunk.type === 'end' ? nativeResponse(call.request, '', chunk) : nativeResponse(call.request, chunk.type === 'delta' ? chunk.text : ''));

async function stream(ctx: AppContext, call: TextCall, request: FastifyRequest, reply: FastifyReply, sse: boolean, shape: Shape) {
  if (!sse) {
    // Without alt=sse the format answers one JSON array of the chunks.
    const chunks: unknown[] = [];
    for await (const chunk of streamText(ctx, call, clientGone(reply))) chunks.push(chunkOf(call, chunk));
    return shape(chunks);
  }
  // Routing and the hold happen before the first byte, so their errors still get a status code.
  // Listening from the start: a caller gone before the first token stops the upstream call too.
  const signal = clientGone(reply);
  const chunks = streamText(ctx, call, signal);
  const first = await chunks.next();
  const events = startSse(request, reply, signal, ctx.config.http.streamStallMs);
  try {
    // A caller that has not taken the last write yet holds the upstream read back (sse.ts).
    for (let step = first; !step.done; step = await chunks.next()) if (!events.send(chunkOf(call, step.value))) await events.drained();
  } catch (err) {
    logStreamEnd(request, err);
    events.send({ error: { code: 500, message: 'The stream was interrupted', status: 'INTERNAL' } });
  } finally {
    events.end();
  }
  return reply;
}
