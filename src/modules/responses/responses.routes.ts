import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../accounts/key-guard.ts';
import { badGateway } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { declareSurface } from '../../http/surface.ts';
import { Type } from 'typebox';
import type { Json } from '../../core/text/index.ts';
import { answerWire } from '../text/wire-call.ts';
import { keptUpstreamBy } from '../text/text-call.ts';
import { continueFrom, hasReferences, keepAnswer, readResponse, resolveReferences } from './responses.service.ts';
import { ResponseObject, ResponsesRequest } from './responses.schemas.ts';

const everyUpstreamFailed = () => badGateway('Every upstream for this model failed');

// The Responses API surface (what Codex and the AI SDK's default OpenAI provider call): served by
// an `openai` channel's own /v1/responses as it came, by every other channel through translation.
export function responsesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'openai', keySources: ['bearer'] });
    app.post(
      '/v1/responses',
      {
        config: { callSurface: 'responses' },
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Responses (the OpenAI format): `stream: true` for response.* events; function tools and their outputs, reasoning items, instructions',
          security: [{ bearer: [] }],
          body: ResponsesRequest,
          response: { 200: ResponseObject, ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const key = request.apiKey!;
        const body = hasReferences(request.body as Json) ? await resolveReferences(ctx, key, request.body as Json) : (request.body as Json);
        return answerWire(ctx, request, reply, {
          format: 'responses',
          body,
          endpoint: 'responses',
          allDown: everyUpstreamFailed,
          expand: (neutral) => continueFrom(ctx, key, neutral, body),
          // The call is answered and paid: an answer that could not be kept is logged, not failed.
          answered: (answer, call) => keepAnswer(ctx, key, call.request.wire!.request, body, answer, keptUpstreamBy(call)).catch((err) => request.log.warn({ err, reqId: request.id }, 'a response could not be stored')),
        });
      },
    );
    app.get(
      '/v1/responses/:id',
      {
        preValidation: keyGuard(ctx, { read: true }),
        schema: {
          tags: ['text'],
          summary: 'A stored response (created with `store`, the default), for RESPONSES_TTL_HOURS; another account\'s id is a 404',
          security: [{ bearer: [] }],
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: { 200: ResponseObject, ...ErrorResponses },
        },
      },
      async (request, reply) => reply.type('application/json; charset=utf-8').send(await readResponse(ctx, request.apiKey!, request.params.id)),
    );
  };
}
