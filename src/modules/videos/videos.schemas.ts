import { Type, type Static } from 'typebox';

const RoleImage = Type.Object({ url: Type.String(), role: Type.String() }, { additionalProperties: false });

// POST /v1/videos/generations: the union of the three families' fields, typed. Which of
// them a model takes, and their ranges, are catalogue rules (catalog/video-rules.ts). A field
// none of them has is a 400 naming it.
export const VideoRequest = Type.Object(
  {
    model: Type.String({ maxLength: 100 }),
    prompt: Type.Optional(Type.String()),
    duration: Type.Optional(Type.Integer({ description: 'Seconds' })),
    size: Type.Optional(Type.String({ maxLength: 20, description: 'Aspect ratio (2.0 models)' })),
    aspect_ratio: Type.Optional(Type.String({ maxLength: 20, description: 'Aspect ratio (1.x models)' })),
    resolution: Type.Optional(Type.String({ maxLength: 10 })),
    seed: Type.Optional(Type.Integer()),
    generate_audio: Type.Optional(Type.Boolean()),
    audio: Type.Optional(Type.Boolean()),
    camerafixed: Type.Optional(Type.Boolean()),
    return_last_frame: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: false }))),
    image_urls: Type.Optional(Type.Array(Type.String())),
    image_with_roles: Type.Optional(Type.Array(RoleImage)),
    video_urls: Type.Optional(Type.Array(Type.String())),
    audio_urls: Type.Optional(Type.Array(Type.String())),
    webhook: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type VideoRequest = Static<typeof VideoRequest>;
