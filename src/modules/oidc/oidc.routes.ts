import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { notFound } from '../../core/errors.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { declareSurface } from '../../http/surface.ts';
import { openSession } from '../console/console.service.ts';
import { readCookie, sessionCookie } from '../console/session-guard.ts';
import { beginSignIn, finishSignIn, OidcRefusal } from './oidc.service.ts';
import { CallbackQuery, OidcStatus, StartQuery } from './oidc.schemas.ts';
import { providerClient } from './provider-client.ts';

// Start and callback are browser navigations, not fetches: they answer with redirects. A sign-in
// that fails lands on the console's sign-in page with a code it explains (/console/?oidc_error=...).

const LOGIN_COOKIE = 'gw_oidc';
const CONSOLE = '/console/';
const Redirect = Type.Null({ description: 'A redirect (Location): to the provider, or back to the console' });
// Refusals are redirects too; these are for a bad query, provider sign-in switched off, or a failure.
const Envelope = ErrorResponses[500];
const NAVIGATION = { 302: Redirect, 400: Envelope, 404: Envelope, 500: Envelope };

/** SameSite=Lax, not Strict: the provider's redirect back is a cross-site navigation that must carry it. */
function loginCookie(ctx: AppContext, token: string, maxAgeSeconds: number) {
  const secure = ctx.config.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
  return `${LOGIN_COOKIE}=${token}; Path=/console/api/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export function oidcRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const settings = ctx.config.oidc;
  const provider = settings ? providerClient(settings, ctx.logger) : undefined;
  const enabled = () => {
    if (!provider) throw notFound('Sign-in with an identity provider is off on this gateway (OIDC_ISSUER is not set)');
    return provider;
  };
  const refused = (reply: FastifyReply, err: unknown, extraCookies: string[] = []) => {
    if (!(err instanceof OidcRefusal)) throw err;
    ctx.logger.info({ code: err.code, reason: err.message }, 'an OpenID Connect sign-in was refused');
    if (extraCookies.length > 0) reply.header('set-cookie', extraCookies);
    return reply.header('cache-control', 'no-store').redirect(`${CONSOLE}?oidc_error=${err.code}`, 302);
  };

  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: [] });
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary });

    app.get('/console/api/oidc', { schema: doc('Whether the console offers sign-in with an identity provider', { response: { 200: OidcStatus } }) },
      async () => ({ enabled: Boolean(settings), name: settings?.name ?? null }));

    app.get('/console/api/oidc/start', { schema: doc('Begin sign-in with the identity provider (redirects to it)', { querystring: StartQuery, response: NAVIGATION }) },
      async (request, reply) => {
        const client = enabled();
        try {
          const limit = ctx.config.console.signInRpm * 3;
          if (!(await ctx.rateLimiter.hit(`oidc-start:ip:${request.ip}`, limit)).allowed) throw new OidcRefusal('too_many', `over ${limit} starts a minute from ${request.ip}`);
          const started = await beginSignIn(ctx, client, request.query.invite);
          return reply.header('set-cookie', loginCookie(ctx, started.token, started.maxAgeSeconds)).header('cache-control', 'no-store').redirect(started.url, 302);
        } catch (err) {
          return refused(reply, err);
        }
      });

    app.get('/console/api/oidc/callback', { schema: doc('Where the identity provider sends the browser back (signs in, then redirects to the console)', { querystring: CallbackQuery, response: NAVIGATION }) },
      async (request, reply) => {
        const client = enabled();
        const spent = loginCookie(ctx, '', 0);
        const at = request.url.indexOf('?');
        const query = at < 0 ? '' : request.url.slice(at + 1);
        try {
          const userId = await finishSignIn(ctx, client, readCookie(request.headers.cookie, LOGIN_COOKIE), query);
          const session = await openSession(ctx, 'account', userId);
          return reply.header('set-cookie', [spent, sessionCookie(ctx, session.token, session.maxAgeSeconds)]).header('cache-control', 'no-store').redirect(CONSOLE, 302);
        } catch (err) {
          return refused(reply, err, [spent]);
        }
      });
  };
}
