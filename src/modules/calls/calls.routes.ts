import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';
import { accountSessionGuard } from '../console/session-guard.ts';
import * as S from './calls.schemas.ts';
import { findBodies, findCall, findCalls, withoutChannel } from './calls.service.ts';

// The call log: every text call and task submit, refused ones too. The operator filters by any
// account and channel; an account holder sees its own account's calls, never a channel.

export function adminCallsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });
    app.get('/admin/calls', { schema: doc('The call log, newest first (cursor paging: pass `next` as `after`)', { querystring: S.AdminCallsQuery, response: { 200: S.AdminCalls, ...ErrorResponses } }) },
      async (request) => findCalls(ctx, request.query));
    app.get('/admin/calls/:id', { schema: doc('One call of the call log', { params: S.CallIdParams, response: { 200: S.AdminCall, ...ErrorResponses } }) },
      async (request) => findCall(ctx, request.params.id));
    app.get('/admin/calls/:id/bodies', { schema: doc("A call's stored request and answer (keys with log_bodies; 404 when none)", { params: S.CallIdParams, response: { 200: S.CallBodies, ...ErrorResponses } }) },
      async (request) => findBodies(ctx, request.params.id));
  };
}

export function consoleCallsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    app.addHook('preValidation', accountSessionGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary, security: [{ consoleSession: [] }] });
    app.get('/console/api/calls', { schema: doc("The account's calls, newest first (cursor paging: pass `next` as `after`)", { querystring: S.AccountCallsQuery, response: { 200: S.AccountCalls, ...ErrorResponses } }) },
      async (request) => {
        const page = await findCalls(ctx, { ...request.query, user_id: request.consoleSession!.user_id! });
        return { data: page.data.map(withoutChannel), next: page.next };
      });
    app.get('/console/api/calls/:id', { schema: doc("One of the account's calls", { params: S.CallIdParams, response: { 200: S.AccountCall, ...ErrorResponses } }) },
      async (request) => withoutChannel(await findCall(ctx, request.params.id, request.consoleSession!.user_id!)));
    app.get('/console/api/calls/:id/bodies', { schema: doc("One of the account's calls: its stored request and answer (keys with log_bodies; 404 when none)", { params: S.CallIdParams, response: { 200: S.CallBodies, ...ErrorResponses } }) },
      async (request) => findBodies(ctx, request.params.id, request.consoleSession!.user_id!));
  };
}
