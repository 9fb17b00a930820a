import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../../http/auth.ts';
import { badGateway, badRequest } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import { generateText, streamText, type TextCall } from '../text/text.service.ts';
import { promptTokens } from '../text/tokens.ts';
import { fromMessages, messageId, messageResponse, streamEvents } from './messages.mapping.ts';
import { MessagesRequest, MessagesResponse } from './messages.schemas.ts';

// SPEC 9: the version header's neutral name and the one value it takes. Clients that send no
// version header (the vendor SDK sends its own) get this version.
const VERSION_HEADER = 'vendor-version';
const VERSIONS = ['2025-10-01'];
const everyUpstreamFailed = () => badGateway('Every upstream for this model failed');

export function messagesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/messages',
      {
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Messages (SPEC 4.8): answered in the messages format itself; `stream: true` for events',
          security: [{ apiKey: [] }],
          body: MessagesRequest,
          response: { 200: MessagesResponse, ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const version = request.headers[VERSION_HEADER];
        if (version !== undefined && !VERSIONS.includes(String(version))) {
          throw badRequest(`${VERSION_HEADER} "${version}" is not supported; use ${VERSIONS.join(', ')}`);
        }
        const text = fromMessages(request.body);
        const call: TextCall = { key: request.apiKey!, endpoint: 'messages', requestId: request.id, request: text, allDown: everyUpstreamFailed };
        const id = messageId();
        if (request.body.stream) return stream(ctx, call, id, request, reply);
        const result = await generateText(ctx, call, clientGone(reply));
        return messageResponse(id, request.body.model, result.text, result.finish, result.stopSequence, result.usage);
      },
    );
  };
}

async function stream(ctx: AppContext, call: TextCall, id: string, request: FastifyRequest, reply: FastifyReply) {
  const controller = new AbortController();
  const chunks = streamText(ctx, call, controller.signal);
  // Routing, the hold and the upstream's first answer come before the first byte: their errors
  // still get a status code and the error envelope.
  const first = await chunks.next();
  const events = startSse(request, reply);
  events.signal.addEventListener('abort', () => controller.abort(events.signal.reason), { once: true });
  for (const [name, data] of streamEvents.start(id, call.request.model, promptTokens(call.request))) events.send(data, name);
  try {
    for (let step = first; !step.done; step = await chunks.next()) {
      const chunk = step.value;
      if (chunk.type === 'delta') {
        const [name, data] = streamEvents.delta(chunk.text);
        events.send(data, name);
      } else {
        for (const [name, data] of streamEvents.end(chunk.finish, chunk.stopSequence, chunk.usage.outputTokens)) events.send(data, name);
      }
    }
  } catch (err) {
    logStreamEnd(request, err);
    events.send({ type: 'error', error: { type: 'bad_gateway', message: 'The stream was interrupted' } }, 'error');
  } finally {
    events.end();
  }
  return reply;
}
