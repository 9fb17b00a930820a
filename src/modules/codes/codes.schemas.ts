import { Type } from 'typebox';
import { MAX_BALANCE_NOTE } from '../../lib/money.ts';

// Redemption codes: an operator makes a batch, an account holder redeems a code for its amount.
const closed = { additionalProperties: false } as const;

export const CreateCodesBody = Type.Object({
  amount: Type.Number({ exclusiveMinimum: 0, description: `What each code credits, in the configured balance unit; a redemption that would take the balance above the maximum is refused: ${MAX_BALANCE_NOTE}` }),
  count: Type.Integer({ minimum: 1, maximum: 1000, description: 'How many codes to make' }),
  uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many accounts each code may credit (each once); default 1' })),
  expires_at: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000_000_000 }), Type.Null()], { description: 'Unix seconds after which the codes are refused; null = never' })),
  note: Type.Optional(Type.String({ maxLength: 500 })),
}, closed);

export const Code = Type.Object(
  {
    id: Type.String(),
    batch_id: Type.String(),
    amount: Type.Number({ description: 'In the configured balance unit' }),
    uses: Type.Integer({ description: 'How many accounts the code may credit' }),
    redeemed: Type.Integer({ description: 'How many accounts it has credited' }),
    expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null = never' }),
    revoked_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null = not revoked' }),
    note: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.Integer({ description: 'Unix seconds' }),
  },
  { $id: 'RedeemCode' },
);

export const CreatedCodes = Type.Object({
  batch_id: Type.String(),
  codes: Type.Array(
    Type.Intersect([Code, Type.Object({ code: Type.String({ description: 'The code itself; shown only in this response (only its hash is kept)' }) })]),
  ),
});

export const CodesQuery = Type.Object({
  batch_id: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'Rows per page, from 1 (default 100, at most 1000)' })),
  before: Type.Optional(Type.String({ maxLength: 100, description: 'Newest first: the last id of the previous page' })),
});

export const CodeList = Type.Object({ data: Type.Array(Code) });

export const RedeemBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 200 }),
}, closed);

export const Redeemed = Type.Object({
  code_id: Type.String(),
  amount: Type.Number({ description: 'What the code credited, in the configured balance unit' }),
  amount_credits: Type.Integer(),
});
