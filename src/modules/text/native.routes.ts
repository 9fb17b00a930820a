import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard, pathModel } from '../../http/auth.ts';
import { notFound, serviceUnavailable } from '../../http/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import { fromNative, nativeResponse } from './native.mapping.ts';
import { NativeRequest, NativeResponse } from './native.schemas.ts';
import { generateText, streamText, type TextCall } from './text.service.ts';
import { sizePrompt } from './prompt-size.ts';

const everyUpstreamUnavailable = () => serviceUnavailable('Every upstream for this model is unavailable');

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const;

export function nativeRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1beta/models/*',
      {
        preValidation: keyGuard(ctx, { model: pathModel }),
        schema: {
          tags: ['text'],
          summary: 'Native text: /v1beta/models/{model}:generateContent | :streamGenerateContent (?alt=sse) | :countTokens (SPEC 4.7)',
          security: [{ bearer: [] }],
          querystring: Type.Object({ alt: Type.Optional(Type.String()) }, { additionalProperties: true }),
          body: NativeRequest,
          response: { 200: Type.Object({ code: Type.Literal(200), data: Type.Unknown() }, { description: 'data is SPEC 2.7' }), ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const target = (request.params as { '*': string })['*'];
        const at = target.lastIndexOf(':');
        const model = decodeURIComponent(at > 0 ? target.slice(0, at) : target);
        const method = at > 0 ? target.slice(at + 1) : '';
        if (!METHODS.includes(method as (typeof METHODS)[number])) throw notFound(`Unknown method "${method}": use ${METHODS.join(', ')}`);
        const text = fromNative(model, request.body);
        if (method === 'countTokens') {
          if ((await ctx.channels.candidates(model)).length === 0) throw notFound(`Model ${model} is not served here`);
          return { code: 200, data: { totalTokens: await sizePrompt(ctx, text) } };
        }
        const call: TextCall = { key: request.apiKey!, endpoint: 'native', requestId: request.id, request: text, allDown: everyUpstreamUnavailable };
        if (method === 'generateContent') {
          const result = await generateText(ctx, call, clientGone(reply));
          return { code: 200, data: nativeResponse(text, result.text, result) };
        }
        return stream(ctx, call, request, reply, request.query.alt === 'sse');
      },
    );
    void NativeResponse;
  };
}

async function stream(ctx: AppContext, call: TextCall, request: Parameters<typeof startSse>[0], reply: Parameters<typeof startSse>[1], sse: boolean) {
  if (!sse) {
    // Without alt=sse the format answers one JSON array of the chunks.
    const chunks: unknown[] = [];
    for await (const chunk of streamText(ctx, call, clientGone(reply))) {
      chunks.push(chunk.type === 'delta' ? nativeResponse(call.request, chunk.text) : nativeResponse(call.request, '', chunk));
    }
    return { code: 200, data: chunks };
  }
  // Routing and the hold happen before the first byte, so their errors still get a status code.
  const controller = new AbortController();
  const chunks = streamText(ctx, call, controller.signal);
  const first = await chunks.next();
  const events = startSse(request, reply);
  events.signal.addEventListener('abort', () => controller.abort(events.signal.reason), { once: true });
  try {
    for (let step = first; !step.done; step = await chunks.next()) {
      const chunk = step.value;
      events.send(chunk.type === 'delta' ? nativeResponse(call.request, chunk.text) : nativeResponse(call.request, '', chunk));
    }
  } catch (err) {
    logStreamEnd(request, err);
    events.send({ error: { code: 500, message: 'The stream was interrupted', status: 'INTERNAL' } });
  } finally {
    events.end();
  }
  return reply;
}
