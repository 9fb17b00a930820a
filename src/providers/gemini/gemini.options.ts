import { Type, type Static } from 'typebox';
import { ExtraHeaders, Options } from '../channel-type.ts';

// An image is made within one call, and the image models take minutes at busy times: one call
// waits this long unless the channel says otherwise (UPSTREAM_TIMEOUT_MS when that is longer).
export const IMAGE_CALL_MS = 360_000;

export const TimeoutSeconds = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 1800, title: 'Timeout (s)', description: 'How long one image call may take before it counts as failed (default 360)' }),
);

export const GeminiChannelOptions = Options({ timeout_seconds: TimeoutSeconds, headers: Type.Optional(ExtraHeaders) });

/** A channel's options as stored (they were checked against the schema when written). */
export type GeminiChannelOptions = Static<typeof GeminiChannelOptions>;

