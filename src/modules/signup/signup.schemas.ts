import { Type } from 'typebox';

// Sign-up, email confirmation, password reset and the operator's invites.
const closed = { additionalProperties: false } as const;
const Email = Type.String({ minLength: 1, maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 1000, description: 'At least 10 characters' });
const Token = Type.String({ minLength: 1, maxLength: 200, description: 'The token of the mailed link' });

export const SignupSettings = Type.Object({
  mode: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('invite')], { description: 'SIGNUP: closed (operators make accounts), open, or invite (an invite code is needed)' }),
  password_reset: Type.Boolean({ description: 'Whether a forgotten password can be reset by mail here' }),
});

export const SignUpBody = Type.Object({
  email: Email,
  password: Password,
  invite: Type.Optional(Type.String({ maxLength: 200, description: 'The invite code (SIGNUP=invite)' })),
}, closed);

export const Accepted = Type.Object({ message: Type.String() });

export const VerifyBody = Type.Object({ token: Token }, closed);
export const Verified = Type.Object({
  verified: Type.Boolean(),
  password_token: Type.Optional(
    Type.String({ description: 'When two sign-ups named this email before it was confirmed: neither password stands, and this token (as a reset link\'s, for POST /console/api/password-reset/confirm) sets one' }),
  ),
});

export const ResetBody = Type.Object({ email: Email }, closed);
export const ResetConfirmBody = Type.Object({ token: Token, password: Password }, closed);
export const ResetDone = Type.Object({ reset: Type.Boolean() });

export const CreateInviteBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320, description: 'Only this email may use the invite (any case); absent = anyone' })),
  expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000_000_000 }), Type.Null()], { description: 'Unix seconds; absent = SIGNUP_INVITE_TTL_HOURS from now, null = never' })),
}, closed);

const Seconds = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description: `Unix seconds; ${description}` });

export const Invite = Type.Object(
  {
    id: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], { description: 'The email it is bound to; null = anyone' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('used'), Type.Literal('revoked'), Type.Literal('expired')]),
    created_at: Type.Integer({ description: 'Unix seconds' }),
    expires_at: Seconds('null = never'),
    used_at: Seconds('null = not used'),
    used_by: Type.Union([Type.String(), Type.Null()], { description: 'The account it opened' }),
    revoked_at: Seconds('null = not revoked'),
  },
  { $id: 'Invite' },
);

export const CreatedInvite = Type.Intersect([
  Invite,
  Type.Object({
    code: Type.String({ description: 'The invite code; shown only in this response (only its hash is kept)' }),
    link: Type.String({ description: "The console's sign-up page with the code filled in, to send to the invitee" }),
  }),
]);

export const InviteList = Type.Object({ data: Type.Array(Invite) });
