import type { FastifySchema } from 'fastify';
import { MODELS, TEXT_MODELS } from '../../core/catalog/models.ts';

// The OpenAPI document only (@fastify/swagger's `transform`): each request's `model` is listed as
// the models its endpoint serves, and each operation a key may call carries an example body that
// the demo key can send as it stands ("Try it out"; test/openapi-examples.test.ts sends them all).
// Validation keeps its free-form model strings: an unknown model is answered by the endpoint's own
// rule (404 for a text model; 400 naming the model for an image or video), which an enum
// in the validation schema would turn into a generic schema 400. Aliases stay accepted.

const IMAGE_MODELS = MODELS.filter((m) => m.kind === 'image').map((m) => m.id);
const VIDEO_MODELS = MODELS.filter((m) => m.kind === 'video').map((m) => m.id);
const NATIVE_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];
const hello = [{ role: 'user', content: 'Write a haiku about the sea.' }];
const nativeBody = { contents: [{ role: 'user', parts: [{ text: 'Write a haiku about the sea.' }] }], generationConfig: { maxOutputTokens: 256 } };

interface Documented {
  /** The models the endpoint serves (the body's `model`, or the path's `{model}`). */
  models?: string[];
  example: Record<string, unknown>;
  /** The path as the document shows it, with its parameters (the route itself is a wildcard). */
  path?: { url: string; params: Record<string, unknown> };
}

/** The native routes' `*` is `{model}:{method}` (in the swagger plugin's route syntax, `:model::method`). */
const nativePath = (url: string) => ({
  url,
  params: {
    type: 'object',
    required: ['model', 'method'],
    properties: {
      model: { type: 'string', enum: TEXT_MODELS, examples: ['textgen-2.5-flash'] },
      method: { type: 'string', enum: NATIVE_METHODS, examples: ['generateContent'], description: 'streamGenerateContent streams with ?alt=sse' },
    },
  },
});

const DOCUMENTED: Record<string, Documented> = {
  '/v1/images/generations': { models: IMAGE_MODELS, example: { model: 'imggen-2-official', prompt: 'A lighthouse on a cliff at dusk, watercolor', size: '16:9' } },
  '/v1/videos/generations': { models: VIDEO_MODELS, example: { model: 'vidgen-2.0-mini', prompt: 'Waves rolling onto a sandy beach at sunrise', duration: 4, resolution: '480p', size: '16:9' } },
  '/v1/messages': { models: TEXT_MODELS, example: { model: 'chatgen-4-haiku', max_tokens: 256, messages: hello } },
  '/v1/messages/count_tokens': { models: TEXT_MODELS, example: { model: 'chatgen-4-haiku', messages: hello } },
  '/v1/chat/completions': { models: TEXT_MODELS, example: { model: 'textgen-2.5-flash', max_tokens: 256, messages: hello } },
  '/v1/responses': { models: TEXT_MODELS, example: { model: 'textgen-2.5-flash', max_output_tokens: 256, input: 'Say hello' } },
  '/v1/seedance2/private-avatar': { example: { group: { name: 'demo-avatars' }, assets: [{ url: 'https://example.com/avatars/face.png', name: 'face' }] } },
  // A code is a secret no document may hold: the example has a code's shape and redeems nothing (404).
  '/v1/redeem': { example: { code: 'gw-abcdefghijklmnopqrstuvwx' } },
  '/v1beta/models/*': { example: nativeBody, path: nativePath('/v1beta/models/:model::method') },
  '/gemini/v1beta/models/*': { example: nativeBody, path: nativePath('/gemini/v1beta/models/:model::method') },
};

/** The JSON Schema keywords this transform reads; the rest are copied as they are. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  [keyword: string]: unknown;
}

/** @fastify/swagger's route transform: copies of the route's schemas, never the validated objects. */
export function documentModels({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  const documented = DOCUMENTED[url];
  // Every documented route's body is a TypeBox object schema.
  const routeBody = schema?.body as JsonSchema | undefined;
  if (!documented || !routeBody) return { schema, url };
  const { models, example, path } = documented;
  const properties = { ...routeBody.properties };
  if (models) properties.model = { ...properties.model, enum: models, examples: [example.model] };
  // One entry in `examples` becomes the media type's `example`, which "Try it out" sends.
  const body = { ...routeBody, properties, examples: [example] };
  return { schema: { ...schema, body, ...(path ? { params: path.params } : {}) }, url: path?.url ?? url };
}
