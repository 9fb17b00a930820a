import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ApiError, unauthorized } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import * as S from './console.schemas.ts';
import { signInAccount, signInOperator, signOut, type NewSession } from './console.service.ts';
import { readCookie, readSession, SESSION_COOKIE, sessionCookie } from './session-guard.ts';
import { declareSurface } from '../../http/surface.ts';
import { topupSettings } from '../topups/topups.service.ts';

export function sessionRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary });
    const started = (reply: FastifyReply, session: NewSession) =>
      reply
        .header('set-cookie', sessionCookie(ctx, session.token, session.maxAgeSeconds))
        .header('cache-control', 'no-store')
        .send({ role: session.role, user_id: session.userId, csrf_token: session.csrfToken, billing_unit: ctx.config.billingUnit, topups: topupSettings(ctx) });

    app.post('/console/api/session', { schema: doc('Sign in as an account holder (sets the session cookie)', { body: S.AccountSignInBody, response: { 200: S.Session, ...ErrorResponses } }) },
      async (request, reply) => started(reply, await signInAccount(ctx, request.body, request.ip)));

    app.post('/console/api/session/operator', { schema: doc('Sign in as the operator with ADMIN_TOKEN (sets the session cookie)', { body: S.OperatorSignInBody, response: { 200: S.Session, ...ErrorResponses } }) },
      async (request, reply) => started(reply, await signInOperator(ctx, request.body.admin_token, request.ip)));

    app.get('/console/api/session', { schema: doc('The current console session', { response: { 200: S.Session, ...ErrorResponses } }) },
      async (request, reply) => {
        const session = await readSession(ctx, request);
        if (!session) throw unauthorized('Not signed in');
        return reply.header('cache-control', 'no-store').send({ role: session.role, user_id: session.user_id, csrf_token: session.csrf_token, billing_unit: ctx.config.billingUnit, topups: topupSettings(ctx) });
      });

    app.delete('/console/api/session', { schema: doc('Sign out (a live session needs its x-csrf-token, else 403)', { response: { 200: Type.Object({ signed_out: Type.Boolean() }), 403: ErrorResponses[400], ...ErrorResponses } }) },
      async (request, reply) => {
        // A session that has ended already (401) is signed out all the same: its cookie is cleared.
        // A live one without its CSRF header is refused (403) as any other change is: answering
        // signed_out while the session stays valid would mislead whoever holds a copy of the cookie.
        const session = await readSession(ctx, request).catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 401) return undefined;
          throw err;
        });
        const token = readCookie(request.headers.cookie, SESSION_COOKIE);
        if (session && token) await signOut(ctx, token);
        return reply.header('set-cookie', sessionCookie(ctx, '', 0)).send({ signed_out: true });
      });
  };
}
