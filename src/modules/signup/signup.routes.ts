import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';
import * as S from './signup.schemas.ts';
import { createInvite, findInvites, revoke } from './invites.service.ts';
import { confirmReset, requestReset, signUp, signupSettings, verifyEmail } from './signup.service.ts';

// The refusals these routes may answer besides the common ones, documented with them.
const REFUSALS = { ...ErrorResponses, 403: ErrorResponses[400] };

/** The console's routes for people who are not signed in: open an account, confirm it, reset a password. */
export function signupRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary });

    app.get('/console/api/signup', { schema: doc('Whether customers may open accounts here (SIGNUP) and reset a password by mail', { response: { 200: S.SignupSettings } }) },
      () => signupSettings(ctx));

    app.post('/console/api/signup', { schema: doc('Open an account: a link to confirm the email is mailed (an email that has an account gets a mail saying so; the answer is the same). Closed 403; invite mode without a valid invite 403', { body: S.SignUpBody, response: { 202: S.Accepted, ...REFUSALS } }) },
      async (request, reply) => reply.status(202).send(await signUp(ctx, request.body, request.ip)));

    app.post('/console/api/verify', { schema: doc("Confirm the account's email with the mailed link's token (once; it expires)", { body: S.VerifyBody, response: { 200: S.Verified, ...REFUSALS } }) },
      (request) => verifyEmail(ctx, request.body.token, request.ip));

    app.post('/console/api/password-reset', { schema: doc('Ask for a link to set a new password (mailed when the email has an account; the answer is the same)', { body: S.ResetBody, response: { 202: S.Accepted, ...REFUSALS } }) },
      async (request, reply) => reply.status(202).send(await requestReset(ctx, request.body, request.ip)));

    app.post('/console/api/password-reset/confirm', { schema: doc("Set a new password with the mailed link's token: the old password stops working and the account's sessions end", { body: S.ResetConfirmBody, response: { 200: S.ResetDone, ...REFUSALS } }) },
      (request) => confirmReset(ctx, request.body, request.ip));
  };
}

/** The operator's invites for SIGNUP=invite. */
export function adminInvitesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });

    app.post('/admin/invites', { schema: doc('Make an invite (the code is shown once; only its hash is kept), optionally bound to one email', { body: S.CreateInviteBody, response: { 201: S.CreatedInvite, ...ErrorResponses } }) },
      async (request, reply) => reply.status(201).send(await createInvite(ctx, request.body)));

    app.get('/admin/invites', { schema: doc('List invites, newest first, with their state (never the codes)', { response: { 200: S.InviteList, ...ErrorResponses } }) },
      async () => ({ data: await findInvites(ctx) }));

    app.delete('/admin/invites/:id', { schema: doc('Withdraw an invite (refused from then on; an account it opened stays)', { params: IdParams, response: { 200: S.Invite, 404: ErrorResponses[400], ...ErrorResponses } }) },
      (request) => revoke(ctx, request.params.id));
  };
}
