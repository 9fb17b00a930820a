import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { badRequest } from '../../core/errors.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';
import { accountSessionGuard } from '../console/session-guard.ts';
import { stripeFor } from './stripe-client.ts';
import { applyEvent } from './stripe-events.ts';
import * as S from './topups.schemas.ts';
import { findTopups, startTopup, topupsOn } from './topups.service.ts';

// Top-ups with Stripe Checkout. Every route exists whether or not STRIPE_SECRET_KEY is set; with it
// unset each answers a 404 that says top-ups are off.

const OFF = { 404: ErrorResponses[400] };
const PAGING = 'newest first (cursor paging: pass `next` as `after`)';
// The webhook's own answers: a body over its limit, and an event to credit later (Stripe delivers it again).
const WEBHOOK_REFUSALS = { 413: ErrorResponses[400], 503: ErrorResponses[400] };

/** The account holder's: start a top-up, list its own. */
export function consoleTopupsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    app.addHook('preValidation', accountSessionGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary, security: [{ consoleSession: [] }] });
    app.post('/console/api/topups', { schema: doc('Start a top-up: a Stripe Checkout Session for the amount (TOPUP_MIN to TOPUP_MAX, else 400); send the browser to checkout_url. The balance grows when Stripe reports the payment; 502 when Stripe will not make the session (the top-up is listed as failed)', { body: S.TopupBody, response: { 200: S.CreatedTopup, ...OFF, 502: ErrorResponses[400], ...ErrorResponses } }) },
      (request) => startTopup(ctx, request.consoleSession!.user_id!, request.body.amount));
    app.get('/console/api/topups', { schema: doc(`The account's top-ups, ${PAGING}`, { querystring: S.AccountTopupsQuery, response: { 200: S.TopupList, ...OFF, ...ErrorResponses } }) },
      (request) => {
        topupsOn(ctx);
        return findTopups(ctx, { ...request.query, userId: request.consoleSession!.user_id! });
      });
  };
}

/** The operator's: every account's top-ups. */
export function adminTopupsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    app.get('/admin/topups', { schema: { tags: ['admin'], summary: `Top-ups paid with Stripe, every account's or one's (user_id), ${PAGING}`, security: [{ admin: [] }], querystring: S.AdminTopupsQuery, response: { 200: S.TopupList, ...OFF, ...ErrorResponses } } },
      (request) => {
        topupsOn(ctx);
        const { user_id, ...paging } = request.query;
        return findTopups(ctx, { ...paging, ...(user_id !== undefined ? { userId: user_id } : {}) });
      });
  };
}

/** Stripe's events, verified by their signature over the exact bytes sent. */
export function stripeWebhookRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: [] });
    // In this plugin alone the body is kept as the text that came: the signature covers those bytes,
    // and JSON parsed and written again would not match it.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.post('/webhooks/stripe', {
      bodyLimit: 1024 * 1024,
      schema: { tags: ['balance'], summary: "Stripe's webhook endpoint: signed events (Stripe-Signature) that credit paid top-ups and take back refunds and lost disputes; a bad signature is a 400; an event it cannot apply yet (a credit past the balance maximum, a refund or lost dispute before its top-up is credited) is a 503, so Stripe delivers it again", response: { 200: S.WebhookReceived, ...OFF, ...WEBHOOK_REFUSALS, ...ErrorResponses } },
    }, async (request) => {
      const topups = topupsOn(ctx);
      const signature = request.headers['stripe-signature'];
      if (typeof signature !== 'string' || typeof request.body !== 'string') throw badRequest('A Stripe event needs its body and its Stripe-Signature header');
      const stripe = await stripeFor(topups);
      let event;
      try {
        event = stripe.webhooks.constructEvent(request.body, signature, topups.stripeWebhookSecret);
      } catch {
        throw badRequest('The Stripe-Signature header does not match the body');
      }
      // Signed but not an event Stripe sends: no retry would make it one.
      const data = (event as { data?: { object?: unknown } }).data;
      if (typeof event.type !== 'string' || typeof data?.object !== 'object' || data.object === null) throw badRequest('A Stripe event needs its type and data.object');
      // A failure past this point is ours: it answers 5xx, and Stripe delivers the event again.
      const outcome = await applyEvent(ctx, event);
      ctx.logger.info({ event: event.id, type: event.type, outcome }, 'Stripe event');
      return { received: true };
    });
  };
}
