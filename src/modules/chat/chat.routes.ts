import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../../http/auth.ts';
import { badGateway } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import { generateText, streamText, type TextCall } from '../text/text.service.ts';
import { chatChunk, chatCompletion, completionId, fromChat } from './chat.mapping.ts';
import { ChatRequest, ChatResponse } from './chat.schemas.ts';
import { declareSurface } from '../../http/surface.ts';

const everyUpstreamFailed = () => badGateway('Every upstream for this model failed');

export function chatRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'openai', keySources: ['bearer'] });
    app.post(
      '/v1/chat/completions',
      {
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['text'],
          summary: 'Chat completions (the OpenAI format): `stream: true` for chat.completion.chunk events ending with data: [DONE]',
          security: [{ bearer: [] }],
          body: ChatRequest,
          response: { 200: ChatResponse, ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const text = fromChat(request.body);
        const call: TextCall = { key: request.apiKey!, endpoint: 'chat-completions', requestId: request.id, request: text, allDown: everyUpstreamFailed };
        const id = completionId();
        if (request.body.stream) return stream(ctx, call, id, request.body.stream_options?.include_usage === true, request, reply);
        const result = await generateText(ctx, call, clientGone(reply));
        return chatCompletion(id, request.body.model, result.text, result.finish, result.usage, result.toolCalls);
      },
    );
  };
}

async function stream(ctx: AppContext, call: TextCall, id: string, includeUsage: boolean, request: FastifyRequest, reply: FastifyReply) {
  // Listening from the start: a caller gone before the first token stops the upstream call too.
  const signal = clientGone(reply);
  const chunks = streamText(ctx, call, signal);
  // Routing, the hold and the upstream's first answer come before the first byte: their errors
  // still get a status code and the error envelope.
  const first = await chunks.next();
  const events = startSse(request, reply, signal, ctx.config.http.streamStallMs);
  const created = Math.floor(Date.now() / 1000);
  const model = call.request.model;
  events.send(chatChunk(id, created, model, { role: 'assistant', content: '' }));
  try {
    for (let step = first; !step.done; step = await chunks.next()) {
      const chunk = step.value;
      // A caller that has not taken the last write yet holds the upstream read back (sse.ts).
      if (chunk.type === 'delta') {
        if (!events.send(chatChunk(id, created, model, { content: chunk.text }))) await events.drained();
      } else if (chunk.type === 'tools') {
        if (!events.send(chatChunk(id, created, model, { tool_calls: chunk.calls }))) await events.drained();
      } else if (chunk.type === 'end') {
        events.send(chatChunk(id, created, model, {}, chunk.finish));
        if (includeUsage) events.send(chatChunk(id, created, model, undefined, undefined, chunk.usage));
      }
    }
    if (!reply.raw.destroyed) reply.raw.write('data: [DONE]\n\n');
  } catch (err) {
    logStreamEnd(request, err);
    // What the SDKs read as an error event of a stream already under way.
    events.send({ error: { code: 502, message: 'The stream was interrupted', type: 'bad_gateway', param: null } });
  } finally {
    events.end();
  }
  return reply;
}
