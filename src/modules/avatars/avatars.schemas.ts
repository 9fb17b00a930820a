import { Type, type Static } from 'typebox';

const AssetInput = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 4096, description: 'Publicly reachable' }),
    name: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);

// POST /v1/seedance2/private-avatar. Which fields may go together is checked by
// avatar-rules.ts; a field's absence is allowed here so those rules can name what is missing.
// A field not listed (here, in group, or in an asset: avatar-rules.ts) is a 400 naming it.
export const AvatarRequest = Type.Object(
  {
    group: Type.Optional(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false })),
    group_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    project_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default `default`' })),
    asset_type: Type.Optional(Type.String({ description: 'Image (default), Video or Audio' })),
    assets: Type.Optional(Type.Array(Type.Unknown(), { description: '1 to 20 entries of {url, name}' })),
    url: Type.Optional(Type.String({ maxLength: 4096, description: 'Single-asset form' })),
    name: Type.Optional(Type.String({ maxLength: 500, description: 'Single-asset form' })),
    webhook: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type AvatarRequest = Static<typeof AvatarRequest>;
export { AssetInput };

const AssetEntry = Type.Object({ asset_id: Type.String(), asset_url: Type.String({ description: 'asset://<asset_id>' }), status: Type.String({ description: 'Active or Failed' }) });

// The avatar receipt, plus the group the assets went into.
export const AvatarReceipt = Type.Object(
  {
    code: Type.Literal(200),
    data: Type.Object({
      id: Type.String(),
      object: Type.Literal('vidgen.avatar.asset.task'),
      status: Type.Literal('processing'),
      progress: Type.Integer(),
      model: Type.String(),
      group_id: Type.String(),
    }),
  },
  { $id: 'AvatarReceipt' },
);
export type AvatarReceipt = Static<typeof AvatarReceipt>;

export const AssetView = Type.Object({
  asset_id: Type.String(),
  asset_url: Type.String(),
  status: Type.String({ description: 'Pending while reviewed, then Active or Failed' }),
  name: Type.String(),
  asset_type: Type.String(),
  group_id: Type.String(),
  task_id: Type.String(),
  created: Type.Integer(),
});

export { AssetEntry };
