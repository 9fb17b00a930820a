import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../../http/auth.ts';
import { badGateway, badRequest } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import { countPromptTokens, generateText, streamText, type TextCall } from '../text/text.service.ts';
import { promptTokens } from '../text/tokens.ts';
import { fromMessages, messageId, messageResponse, streamEvents } from './messages.mapping.ts';
import { CountTokensRequest, MessagesRequest, MessagesResponse } from './messages.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

// SPEC 9: the version header's neutral name and the one value it takes. The vendor's own header,
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
        const text = fromMessages(request.body);
        const call: TextCall = { key: request.apiKey!, endpoint: 'messages', requestId: request.id, request: text, allDown: everyUpstreamFailed };
        const id = messageId();
        if (request.body.stream) {
          text.messagesEvents = { id, model: request.body.model };
          return stream(ctx, call, id, request, reply);
        }
        const result = await generateText(ctx, call, clientGone(reply));
        return messageResponse(id, request.body.model, result.text, result.finish, result.stopSequence, result.usage);
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
        const text = fromMessages({ ...request.body, max_tokens: 1 });
        return { input_tokens: await countPromptTokens(ctx, text, request.apiKey!, clientGone(reply)) };
      },
    );
  };
}

async function stream(ctx: AppContext, call: TextCall, id: string, request: FastifyRequest, reply: FastifyReply) {
  // Listening from the start: a caller gone before the first token stops the upstream call too.
  const signal = clientGone(reply);
  const chunks = streamText(ctx, call, signal);
  // Routing, the hold and the upstream's first answer come before the first byte: their errors
  // still get a status code and the error envelope.
  const first = await chunks.next();
  const events = startSse(request, reply, signal, ctx.config.http.streamStallMs);
  // A messages upstream's own events (message_start first) go out as they came; others are encoded here.
  const forwarding = !first.done && first.value.type === 'events';
  if (!forwarding) for (const [name, data] of streamEvents.start(id, call.request.model, promptTokens(call.request))) events.send(data, name);
  try {
    for (let step = first; !step.done; step = await chunks.next()) {
      const chunk = step.value;
      // A caller that has not taken the last write yet holds the upstream read back (sse.ts).
      if (chunk.type === 'events') {
        if (!events.write(chunk.parts)) await events.drained();
      } else if (forwarding) {
        continue;
      } else if (chunk.type === 'delta') {
        const [name, data] = streamEvents.delta(chunk.text);
        if (!events.send(data, name)) await events.drained();
      } else if (chunk.type === 'end') {
        for (const [name, data] of streamEvents.end(chunk.finish, chunk.stopSequence, chunk.usage)) events.send(data, name);
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
