import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { notFound } from '../../core/errors.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { rotateSigningSecret, signingSecret } from './webhooks.repo.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';

const Secret = Type.Object({ user_id: Type.String(), secret: Type.String({ description: 'Standard Webhooks secret (whsec_...)' }) });

// The account's callback signing secret (the admin task and delivery views: admin/admin-tasks.routes.ts).
export function webhooksRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });

    app.get('/admin/users/:id/webhook-secret', { schema: doc("The account's callback signing secret", { params: IdParams, response: { 200: Secret, ...ErrorResponses } }) },
      async (request) => {
        const secret = await signingSecret(ctx.db, request.params.id);
        if (!secret) throw notFound(`No user ${request.params.id}`);
        return { user_id: request.params.id, secret };
      });

    app.post('/admin/users/:id/webhook-secret/rotate', { schema: doc('Replace the signing secret; later callbacks use the new one', { params: IdParams, response: { 200: Secret, ...ErrorResponses } }) },
      async (request) => {
        const secret = await rotateSigningSecret(ctx.db, request.params.id);
        if (!secret) throw notFound(`No user ${request.params.id}`);
        return { user_id: request.params.id, secret };
      });
  };
}
