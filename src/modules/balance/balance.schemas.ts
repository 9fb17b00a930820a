import { Type, type Static } from 'typebox';

// The balance of the calling key.
export const KeyBalance = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.Optional(Type.String()),
    remain_balance: Type.Optional(Type.Number({ description: 'In the configured unit (USD or credits); -1 when unlimited' })),
    remain_credits: Type.Optional(Type.Integer({ description: '-1 when unlimited' })),
    used_balance: Type.Optional(Type.Number()),
    used_credits: Type.Optional(Type.Integer()),
    unlimited_quota: Type.Optional(Type.Boolean()),
  },
  { $id: 'KeyBalance', description: 'Balance of the API key used in the call' },
);
export type KeyBalance = Static<typeof KeyBalance>;

// The balance of the whole account, with no unlimited_quota field.
export const UserBalance = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.Optional(Type.String()),
    remain_balance: Type.Optional(Type.Number()),
    remain_credits: Type.Optional(Type.Integer()),
    used_balance: Type.Optional(Type.Number()),
    used_credits: Type.Optional(Type.Integer()),
  },
  { $id: 'UserBalance', description: 'Balance of the account that owns the key' },
);
export type UserBalance = Static<typeof UserBalance>;
