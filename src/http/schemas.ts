import { Type } from 'typebox';

// The standard error envelope, shared by every route's documented error responses.
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Integer({ description: 'Equals the HTTP status' }),
        message: Type.String(),
        type: Type.Optional(Type.String({ description: 'Standard envelope' })),
        status: Type.Optional(Type.String({ description: 'Native text envelope (/v1beta and /gemini)' })),
      },
      { additionalProperties: true },
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: true },
);

const ref = Type.Unsafe({ $ref: 'ErrorEnvelope#' });

export const ErrorResponses = {
  400: ref,
  401: ref,
  429: ref,
  500: ref,
};

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
