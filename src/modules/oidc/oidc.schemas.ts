import { Type } from 'typebox';

export const OidcStatus = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether the console offers sign-in with an identity provider' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'The provider, as the sign-in button names it' }),
  },
  { additionalProperties: false },
);

export const StartQuery = Type.Object(
  { invite: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An invitation code, for SIGNUP=invite' })) },
  { additionalProperties: false },
);

// What the provider sends back: these, and whatever else it adds (iss, session_state...).
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 512 })),
    error_description: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: true },
);

/**
 * Why a provider sign-in ended without a session: the console's sign-in page shows a sentence for
 * each (`/console/?oidc_error=<code>`). Codes, not text, so no link can put words on the page.
 */
export type OidcErrorCode = 'state' | 'denied' | 'token' | 'unreachable' | 'no_email' | 'unverified' | 'closed' | 'invite' | 'disabled' | 'too_many';
