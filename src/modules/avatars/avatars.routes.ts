import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import type { Asset } from '../../db/types.ts';
import { adminGuard } from '../../http/auth.ts';
import { fixedModel, keyGuard } from '../accounts/key-guard.ts';
import { AVATAR_REVIEW_MODEL } from '../../core/catalog/models.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { listAssets, listGroups } from './avatars.repo.ts';
import { AssetView, AvatarReceipt, AvatarRequest } from './avatars.schemas.ts';
import { assetUrl, submitAvatar } from './avatars.service.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';

const view = (a: Asset) => ({
  asset_id: a.id,
  asset_url: assetUrl(a.id),
  status: a.status,
  name: a.name,
  asset_type: a.asset_type,
  group_id: a.group_id,
  task_id: a.task_id,
  created: Math.floor(a.created_at / 1000),
});
const Assets = Type.Object({ data: Type.Array(AssetView) });
const GroupView = Type.Object({
  group_id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  kind: Type.String({ description: 'AIGC for groups made by avatar submits' }),
  project_name: Type.String(),
  created: Type.Integer(),
});

export function avatarsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    app.post(
      '/v1/seedance2/private-avatar',
      {
        config: { callSurface: 'avatars' },
        preValidation: keyGuard(ctx, { model: fixedModel(AVATAR_REVIEW_MODEL) }),
        schema: {
          tags: ['avatars'],
          summary: 'Submit avatar assets for review',
          security: [{ bearer: [] }],
          body: AvatarRequest,
          response: { 200: AvatarReceipt, 402: ErrorResponses[400], 503: ErrorResponses[400], ...ErrorResponses },
        },
      },
      (request) => submitAvatar(ctx, request.apiKey!, request.body, request.callEntry),
    );

    app.get(
      '/v1/seedance2/private-avatar/assets',
      {
        preValidation: keyGuard(ctx),
        schema: {
          tags: ['avatars'],
          summary: "The caller's avatar assets and their review status",
          security: [{ bearer: [] }],
          querystring: Type.Object({ group_id: Type.Optional(Type.String({ maxLength: 100 })) }),
          response: { 200: Assets, ...ErrorResponses },
        },
      },
      async (request) => ({ data: (await listAssets(ctx.db, request.apiKey!.user_id, request.query.group_id)).map(view) }),
    );

    app.get(
      '/v1/seedance2/private-avatar/groups',
      {
        preValidation: keyGuard(ctx),
        schema: {
          tags: ['avatars'],
          summary: "The caller's asset groups (pass one as group_id to add assets to it)",
          security: [{ bearer: [] }],
          response: { 200: Type.Object({ data: Type.Array(GroupView) }), ...ErrorResponses },
        },
      },
      async (request) => ({
        data: (await listGroups(ctx.db, request.apiKey!.user_id)).map((g) => ({
          group_id: g.id,
          name: g.name,
          description: g.description,
          kind: g.kind,
          project_name: g.project_name,
          created: Math.floor(g.created_at / 1000),
        })),
      }),
    );

    app.get(
      '/admin/assets',
      {
        config: ADMIN_SURFACE,
        preValidation: adminGuard(ctx),
        schema: {
          tags: ['admin'],
          summary: "An account's avatar assets",
          security: [{ admin: [] }],
          querystring: Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 100 }), group_id: Type.Optional(Type.String({ maxLength: 100 })) }),
          response: { 200: Assets, ...ErrorResponses },
        },
      },
      async (request) => ({ data: (await listAssets(ctx.db, request.query.user_id, request.query.group_id)).map(view) }),
    );
  };
}
