import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../accounts/key-guard.ts';
import { badGateway, badRequest } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { clientGone } from '../../http/sse.ts';
import { countPromptTokens } from '../text/text.service.ts';
import { answerWire, wireTextCall } from '../text/wire-call.ts';
import { CountTokensRequest, MessagesRequest, MessagesResponse } from './messages.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

// The version header's neutral name and the one value it takes. The vendor's own header,
// `anthropic-version`, is accepted beside it with any dated version (the messages SDK on npm sends
// its own date; the answers here are the same for all). No version header: this version.
const VERSION_HEADER = 'vendor-version';
const VERSIONS = ['2025-10-01'];
const DATED = /^\d{4}-\d{2}-\d{2}$/;
const everyUpstreamFailed = () => badGateway('Every upstream for this model failed');

function checkVersion(request: FastifyRequest): void {
  const version = request.headers[VERSION_HEADER];
  if (version !== undefined && !VERSIONS.includes(String(version))) throw badRequest(`${VERSION_HEADER} "${version}" is not supported; use ${VERSIONS.join(', ')}`);
  const vendor = request.headers['anthropic-version'];
  if (vendor !== undefined && !DATED.test(String(vendor))) throw badRequest(`anthropic-version "${vendor}" is not a version (YYYY-MM-DD, e.g. 2023-06-01)`);
}

export function messagesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'messages', keySources: ['x-api-key', 'bearer'] });
    // The messages SDK reads its `requestID` from this header (x-request-id stays for everyone else).
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('request-id', request.id);
      done();
    });
    app.post(
      '/v1/messages',
      {
        config: { callSurface: 'messages' },
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Messages: answered in the messages format itself; `stream: true` for events',
          security: [{ apiKey: [] }],
          body: MessagesRequest,
          response: { 200: MessagesResponse, ...ErrorResponses },
        },
      },
      async (request, reply) => {
        checkVersion(request);
        return answerWire(ctx, request, reply, { format: 'messages', body: request.body, endpoint: 'messages', allDown: everyUpstreamFailed });
      },
    );
    app.post(
      '/v1/messages/count_tokens',
      {
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: "A prompt's input tokens (messages.countTokens()); nothing is charged",
          security: [{ apiKey: [] }],
          body: CountTokensRequest,
          response: { 200: Type.Object({ input_tokens: Type.Integer() }), ...ErrorResponses },
        },
      },
      async (request, reply) => {
        checkVersion(request);
        const call = await wireTextCall(request, { format: 'messages', body: { ...request.body, max_tokens: 1 }, endpoint: 'messages', allDown: everyUpstreamFailed });
        return { input_tokens: await countPromptTokens(ctx, call.request, request.apiKey!, clientGone(reply)) };
      },
    );
  };
}
