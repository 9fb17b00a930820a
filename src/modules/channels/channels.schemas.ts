import { Type } from 'typebox';

const Models = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000, description: 'Model ids served; "*" serves every model' });
const Mapping = Type.Record(Type.String(), Type.String({ maxLength: 200 }), { description: 'Our model id -> the upstream name' });

export const CreateChannelBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  type: Type.String({ description: 'simulator or relay' }),
  base_url: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  secret: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
  models: Models,
  model_mapping: Type.Optional(Mapping),
  priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
  weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
}, { additionalProperties: false });

// Partial drops the object's options: a field that is not a channel's stays a 400 here too.
export const UpdateChannelBody = Type.Partial(CreateChannelBody, { additionalProperties: false });

export const Channel = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.String(),
    base_url: Type.Union([Type.String(), Type.Null()]),
    has_secret: Type.Boolean(),
    models: Type.Array(Type.String()),
    model_mapping: Type.Record(Type.String(), Type.String()),
    priority: Type.Integer(),
    weight: Type.Integer(),
    status: Type.String(),
    created_at: Type.Integer(),
  },
  { $id: 'Channel' },
);
