import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../accounts/key-guard.ts';
import { badGateway } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { answerWire } from '../text/wire-call.ts';
import { ChatRequest, ChatResponse } from './chat.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

const everyUpstreamFailed = () => badGateway('Every upstream for this model failed');

export function chatRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'openai', keySources: ['bearer'] });
    app.post(
      '/v1/chat/completions',
      {
        config: { callSurface: 'chat' },
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Chat completions (the OpenAI format): `stream: true` for chat.completion.chunk events ending with data: [DONE]',
          security: [{ bearer: [] }],
          body: ChatRequest,
          response: { 200: ChatResponse, ...ErrorResponses },
        },
      },
      async (request, reply) => answerWire(ctx, request, reply, { format: 'chat', body: request.body, endpoint: 'chat-completions', allDown: everyUpstreamFailed }),
    );
  };
}
