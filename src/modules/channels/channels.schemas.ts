import { Type } from 'typebox';
import { secretFields } from '../../providers/channel-type.ts';
import { CHANNEL_TYPES, CHANNEL_TYPE_NAMES } from '../../providers/registry.ts';

const Models = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000, description: 'Model ids served; "*" serves every model the type can (GET /admin/channel-types: serves); a model of a kind the type does not serve is a 400' });
const Mapping = Type.Record(Type.String(), Type.String({ maxLength: 200 }), { description: 'Our model id -> the upstream name' });

// The document's account of each type's options, from the registry (the schemas themselves are at
// GET /admin/channel-types). The route checks options against the chosen type's schema.
const optionsOfEachType = CHANNEL_TYPES.map((entry) => {
  const fields = Object.keys(entry.options.properties);
  const secrets = new Set(secretFields(entry));
  const listed = fields.map((f) => (secrets.has(f) ? `${f} (secret, shown back as has_${f})` : f));
  return `${entry.type}: ${listed.length > 0 ? listed.join(', ') : 'none'}`;
}).join('; ');

const Options = Type.Record(Type.String(), Type.Unknown(), {
  description: `Settings of the channel's type, checked by its schema. A change merges: a field left out keeps its value, null clears it. Per type: ${optionsOfEachType}`,
});

export const CreateChannelBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  type: Type.Enum([...CHANNEL_TYPE_NAMES], { description: CHANNEL_TYPES.map((e) => `${e.type}: ${e.summary}`).join('; ') }),
  base_url: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  secret: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
  models: Models,
  model_mapping: Type.Optional(Mapping),
  priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
  weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
  options: Type.Optional(Options),
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
    options: Type.Record(Type.String(), Type.Unknown(), { description: 'Plain options as set; each secret one only as has_<field>: true' }),
    health: Type.Object(
      {
        needs_attention: Type.Boolean({ description: "The upstream refused the channel's credentials (401/403); cleared by an accepted task or a new secret, base_url or options" }),
        consecutive_failures: Type.Integer({ description: 'Task submits in a row that failed before the upstream accepted them (each went on to the next channel)' }),
        last_error: Type.Union([Type.String(), Type.Null()]),
        last_error_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds' }),
      },
      { description: 'What the task engine saw of this channel' },
    ),
    created_at: Type.Integer(),
  },
  { $id: 'Channel' },
);

export const ChannelType = Type.Object({
  type: Type.String(),
  summary: Type.String(),
  serves: Type.Array(Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('video'), Type.Literal('avatar')])),
  base_url: Type.Union([Type.Literal('required'), Type.Literal('none')]),
  options: Type.Unknown({ description: "JSON Schema of the type's options; writeOnly fields are secrets" }),
});
