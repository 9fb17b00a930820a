import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';
import { keyGuard } from '../accounts/key-guard.ts';
import { accountSessionGuard } from '../console/session-guard.ts';
import * as S from './codes.schemas.ts';
import { createCodes, findCodes, revoke } from './codes.service.ts';
import { REDEEM_REFUSALS_PER_MINUTE, redeem } from './redeem.ts';

// The refusals a redemption may answer besides the common ones, documented with them.
const REDEEM_ERRORS = { ...ErrorResponses, 403: ErrorResponses[400], 404: ErrorResponses[400] };

const REDEEM_SUMMARY = `Redeem a code: its amount is credited to the account once (unknown 404; revoked, expired, used up or already redeemed by the account 403; more than ${REDEEM_REFUSALS_PER_MINUTE} refusals a minute per account 429)`;

/** The operator's codes: made in batches, listed with their use, revoked one by one. */
export function adminCodesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });

    app.post('/admin/codes', { schema: doc('Make a batch of redemption codes (the codes are shown once; only their hashes are kept)', { body: S.CreateCodesBody, response: { 201: S.CreatedCodes, ...ErrorResponses } }) },
      async (request, reply) => reply.status(201).send(await createCodes(ctx, request.body)));

    app.get('/admin/codes', { schema: doc('List redemption codes, newest first, with their use (never the codes themselves)', { querystring: S.CodesQuery, response: { 200: S.CodeList, ...ErrorResponses } }) },
      async (request) => ({
        data: await findCodes(ctx, { batchId: request.query.batch_id, before: request.query.before, limit: Number(request.query.limit ?? 100) || 100 }),
      }));

    app.delete('/admin/codes/:id', { schema: doc('Revoke a redemption code (refused from then on; what it credited stays)', { params: IdParams, response: { 200: S.Code, 404: ErrorResponses[400], ...ErrorResponses } }) },
      (request) => revoke(ctx, request.params.id));
  };
}

/** `POST /v1/redeem`: the calling key's account redeems a code. */
export function keyRedeemRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    app.post('/v1/redeem', { preValidation: keyGuard(ctx), schema: { tags: ['balance'], summary: REDEEM_SUMMARY, security: [{ bearer: [] }], body: S.RedeemBody, response: { 200: S.Redeemed, ...REDEEM_ERRORS } } },
      (request) => redeem(ctx, request.apiKey!.user_id, request.body.code));
  };
}

/** `POST /console/api/redeem`: the signed-in account holder redeems a code. */
export function consoleRedeemRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    app.addHook('preValidation', accountSessionGuard(ctx));
    app.post('/console/api/redeem', { schema: { tags: ['console'], summary: REDEEM_SUMMARY, security: [{ consoleSession: [] }], body: S.RedeemBody, response: { 200: S.Redeemed, ...REDEEM_ERRORS } } },
      (request) => redeem(ctx, request.consoleSession!.user_id!, request.body.code));
  };
}
