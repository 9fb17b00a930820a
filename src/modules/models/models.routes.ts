import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard, type ModelOf } from '../accounts/key-guard.ts';
import { notFound } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { declareSurface, GEMINI_SURFACE } from '../../http/surface.ts';
import { geminiModel, modelEntry, modelsForKey } from './models.service.ts';

const ModelEntry = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('model'),
    type: Type.Literal('model'),
    created: Type.Integer({ description: 'Unix seconds (OpenAI SDK)' }),
    created_at: Type.String({ description: 'RFC 3339 (messages SDK)' }),
    owned_by: Type.String(),
    display_name: Type.String(),
    kind: Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('video'), Type.Literal('avatar')]),
    endpoints: Type.Array(Type.String()),
    pricing: Type.Unknown({ description: "The model's entry of the price table (USD) as the caller's account pays it: its group's override, else the base price times the group's multiplier" }),
  },
  { $id: 'ModelEntry' },
);
const ref = Type.Unsafe<unknown>({ $ref: 'ModelEntry#' });
const ModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ref),
  has_more: Type.Boolean(),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
});
const idParam: ModelOf = (request) => (request.params as { id?: string }).id;

export function modelsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The messages SDK's models.list() reads /v1/models: its envelope, and x-api-key beside Bearer.
    declareSurface(app, { envelope: 'messages', keySources: ['bearer', 'x-api-key'] });
    app.addSchema(ModelEntry);
    // The messages SDK reads its `requestID` from this header.
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('request-id', request.id);
      done();
    });
    app.get(
      '/v1/models',
      {
        preValidation: keyGuard(ctx, { read: true }),
        schema: { tags: ['text'], summary: 'The models this key may use (OpenAI and messages SDKs: models.list())', security: [{ bearer: [] }, { apiKey: [] }], response: { 200: ModelList, ...ErrorResponses } },
      },
      async (request) => {
        const data = (await modelsForKey(ctx, request.apiKey!)).map((m) => modelEntry(ctx, request.apiKey!, m));
        return { object: 'list' as const, data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
      },
    );
    app.get(
      '/v1/models/:id',
      {
        preValidation: keyGuard(ctx, { model: idParam, read: true }),
        schema: { tags: ['text'], summary: 'One model (models.retrieve())', security: [{ bearer: [] }, { apiKey: [] }], params: Type.Object({ id: Type.String({ maxLength: 200 }) }), response: { 200: ref, ...ErrorResponses } },
      },
      async (request) => {
        const found = (await modelsForKey(ctx, request.apiKey!)).find((m) => m.id === request.params.id);
        if (!found) throw notFound(`Model ${request.params.id} is not served here`);
        return modelEntry(ctx, request.apiKey!, found);
      },
    );
    app.get(
      '/gemini/v1beta/models',
      {
        config: GEMINI_SURFACE,
        preValidation: keyGuard(ctx, { read: true }),
        schema: { tags: ['text'], summary: 'The text models this key may use, as the Gemini API lists them', security: [{ bearer: [] }], querystring: Type.Object({}, { additionalProperties: true }) },
      },
      async (request) => ({ models: (await modelsForKey(ctx, request.apiKey!)).filter((m) => m.kind === 'text').map(geminiModel) }),
    );
  };
}
