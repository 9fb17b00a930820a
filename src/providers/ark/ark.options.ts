import { Type, type Static } from 'typebox';
import { Options, secret } from '../channel-type.ts';

// A Seedream image is made within one call (90-160 s at Seedream 5.0 Pro): one call waits this long
// unless the channel says otherwise (UPSTREAM_TIMEOUT_MS when that is longer).
export const IMAGE_CALL_MS = 360_000;

const text = (title: string, description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, title, description }));

export const ArkOptions = Options({
  response_format: Type.Optional(
    Type.Union([Type.Literal('url'), Type.Literal('b64_json')], { title: 'Image answers', description: "url (default: ModelArk's 24-hour links, downloaded into our store) or b64_json (the bytes in the answer)" }),
  ),
  watermark: Type.Optional(Type.Boolean({ title: 'Watermark', description: 'Let ModelArk stamp "AI generated" on images (default false)' })),
  timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 1800, title: 'Timeout (s)', description: 'How long one image call may take before it counts as failed (default 360)' })),
  access_key_id: text('Access key ID', "The asset library's OpenAPI access key (avatar review)"),
  secret_access_key: Type.Optional(secret(Type.String({ minLength: 1, maxLength: 200, title: 'Secret access key', description: "The asset library's OpenAPI secret key" }))),
  region: text('Region', 'The asset library\'s region, e.g. ap-southeast-1'),
  max_in_flight: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, title: 'Tasks in flight', description: 'At most this many video tasks at ModelArk at once (it queues about 120 per account); more wait here, in submit order' })),
  max_requests_per_second: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, title: 'Requests per second', description: 'At most this many video calls to ModelArk in any second, per gateway process (polls are batched into list calls either way)' })),
  openapi_base_url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 500, title: 'OpenAPI base URL', description: 'The asset library\'s OpenAPI endpoint, e.g. https://open.byteplusapi.com' })),
});

/** A channel's options as stored (they were checked against ArkOptions when written). */
export type ArkOptions = Static<typeof ArkOptions>;

