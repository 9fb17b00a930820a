import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { keyGuard } from '../accounts/key-guard.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { KeyBalance, UserBalance } from './balance.schemas.ts';
import { keyBalance, MESSAGES, userBalance } from './balance.service.ts';
import { declareSurface } from '../../http/surface.ts';

export function balanceRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    // Balance reads spend nothing: they count against the key's read budget (accounts/key-guard.ts).
    // A deleted key still reads its own record (200, success:false), but nothing else.
    const allowDeleted = keyGuard(ctx, { allowDeleted: true, read: true });
    const accountGuard = keyGuard(ctx, { read: true });
    const keySchema = {
      tags: ['balance'],
      summary: 'Balance of the calling API key',
      security: [{ bearer: [] }],
      response: { 200: KeyBalance, ...ErrorResponses },
    };
    for (const url of ['/v1/balance', '/balance']) {
      // The key cache knows of a deletion before the balance snapshot may: answer from it first.
      app.get(url, { schema: keySchema, preValidation: allowDeleted }, async (request) =>
        request.apiKey!.status === 'deleted' ? { success: false, message: MESSAGES.keyDeleted } : keyBalance(ctx, request.apiKey!.id),
      );
    }
    const userSchema = {
      tags: ['balance'],
      summary: 'Balance of the account that owns the calling key',
      security: [{ bearer: [] }],
      response: { 200: UserBalance, ...ErrorResponses },
    };
    for (const url of ['/v1/user/balance', '/user/balance']) {
      app.get(url, { schema: userSchema, preValidation: accountGuard }, (request) => userBalance(ctx, request.apiKey!.user_id));
    }
  };
}
