import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../../http/auth.ts';
import { badGateway } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { declareSurface } from '../../http/surface.ts';
import { answerWire } from '../text/wire-call.ts';
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
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Responses (the OpenAI format): `stream: true` for response.* events; function tools and their outputs, reasoning items, instructions',
          security: [{ bearer: [] }],
          body: ResponsesRequest,
          response: { 200: ResponseObject, ...ErrorResponses },
        },
      },
      async (request, reply) => answerWire(ctx, request, reply, { format: 'responses', body: request.body, endpoint: 'responses', allDown: everyUpstreamFailed }),
    );
  };
}
