import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import * as accounts from '../accounts/accounts.service.ts';
import { auditLedger } from '../billing/ledger.audit.ts';
import { AdminUsageCsvQuery, CredentialsBody, DayTotals, StatsQuery } from '../console/console.schemas.ts';
import { sendUsageCsv } from '../console/usage-export.ts';
import { setCredentials } from '../console/console.service.ts';
import { totalsForLastDays } from '../console/usage.repo.ts';
import { toBalance } from '../../lib/money.ts';
import * as S from './admin.schemas.ts';
import { patchUser } from './admin-users.service.ts';
import * as groups from '../groups/groups.service.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';

export function adminRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T = {} as T) => ({
      ...extra,
      tags: ['admin'],
      summary,
      security: [{ admin: [] }],
    });

    app.post('/admin/users', { schema: doc('Create an account', { body: S.CreateUserBody, response: { 201: S.User, ...ErrorResponses } }) },
      async (request, reply) => reply.status(201).send(await accounts.createUser(ctx, request.body)));

    app.get('/admin/users', { schema: doc('List accounts', { querystring: S.ListQuery, response: { 200: Type.Object({ data: Type.Array(S.User) }) } }) },
      async (request) => ({
        data: await accounts.findUsers(ctx, Math.min(Number(request.query.limit ?? 100) || 100, 1000), request.query.after),
      }));

    app.post('/admin/users/:id/topup', { schema: doc('Add to an account balance', { params: IdParams, body: S.TopUpBody, response: { 200: S.User, ...ErrorResponses } }) },
      (request) => accounts.topUpUser(ctx, request.params.id, request.body.amount, request.body.note));

    app.patch('/admin/users/:id', { schema: doc("Set an account's low-balance alert (alert_below, alert_url), customer group (group; an unknown one is a 400) or status (disabled: its keys answer 401)", { params: IdParams, body: S.UserPatchBody, response: { 200: S.User, ...ErrorResponses } }) },
      (request) => patchUser(ctx, request.params.id, request.body));

    app.post('/admin/groups', { schema: doc('Create a customer group, or replace every setting of the one with this name (not `default`)', { body: S.GroupBody, response: { 200: S.Group, ...ErrorResponses } }) },
      (request) => groups.saveGroup(ctx, request.body));

    app.get('/admin/groups', { schema: doc('The customer groups (`default` is the price table as it is)', { response: { 200: Type.Object({ data: Type.Array(S.Group) }) } }) },
      async () => ({ data: await groups.findGroups(ctx) }));

    app.post('/admin/keys', { schema: doc('Create an API key (the secret is shown once)', { body: S.CreateKeyBody, response: { 201: S.CreatedKey, ...ErrorResponses } }) },
      async (request, reply) => reply.status(201).send(await accounts.createKey(ctx, request.body)));

    app.get('/admin/keys', { schema: doc("List an account's keys", { querystring: S.KeysQuery, response: { 200: Type.Object({ data: Type.Array(S.Key) }) } }) },
      async (request) => ({ data: await accounts.findKeys(ctx, request.query.user_id) }));

    app.patch('/admin/keys/:id', { schema: doc('Change a key (name, status, quota, rate limit, body capture)', { params: IdParams, body: S.UpdateKeyBody, response: { 200: S.Key, ...ErrorResponses } }) },
      (request) => accounts.changeKey(ctx, request.params.id, request.body));

    app.delete('/admin/keys/:id', { schema: doc('Delete a key (soft delete; refused everywhere within a second)', { params: IdParams, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }), ...ErrorResponses } }) },
      (request) => accounts.deleteKey(ctx, request.params.id));

    app.put('/admin/users/:id/console-credentials', { schema: doc("Set an account's console sign-in (email + password; ends its sessions)", { params: IdParams, body: CredentialsBody, response: { 200: Type.Object({ user_id: Type.String(), email: Type.String() }), ...ErrorResponses } }) },
      (request) => setCredentials(ctx, request.params.id, request.body));

    app.get('/admin/usage.csv', { schema: doc('Text calls and tasks as CSV (streamed; one account with user_id): time, key, model, endpoint, tokens, cost, status', { querystring: AdminUsageCsvQuery }) },
      (request, reply) => sendUsageCsv(reply, ctx.db, request.query, ctx.config));

    app.get('/admin/stats', { schema: doc('Totals per UTC day: requests, spend, task outcomes', { querystring: StatsQuery, response: { 200: Type.Object({ data: Type.Array(DayTotals) }) } }) },
      async (request) => {
        const days = Math.min(Math.max(Number(request.query.days ?? 14) || 14, 1), 365);
        const totals = await totalsForLastDays(ctx.db, days);
        return { data: totals.map((t) => ({ ...t, spend: toBalance(t.spend, ctx.config) })) };
      });

    const Prices = Type.Object({
      source: Type.Union([Type.Literal('file'), Type.Literal('database')], { description: 'file = PRICING_FILE; database = set by an operator' }),
      models: Type.Record(Type.String(), Type.Unknown(), { description: 'USD: per_image, per_second, per_token, per_asset (as config/pricing.json)' }),
    });
    const prices = () => ({ source: ctx.prices.source(), models: ctx.pricing.table().models });
    app.get('/admin/prices', { schema: doc('The prices in force', { response: { 200: Prices, ...ErrorResponses } }) }, prices);
    app.put('/admin/prices', { schema: doc('Replace every price (all processes within seconds; open holds keep their amount)', { body: S.PricesBody, response: { 200: Prices, ...ErrorResponses } }) },
      async (request) => {
        await ctx.prices.save(request.body, (table) => groups.checkGroupsAgainst(ctx, table));
        return prices();
      });
    app.delete('/admin/prices', { schema: doc('Go back to the prices of PRICING_FILE', { response: { 200: Prices, ...ErrorResponses } }) },
      async () => {
        await ctx.prices.reset((table) => groups.checkGroupsAgainst(ctx, table));
        return prices();
      });

    app.get('/admin/ledger/audit', { schema: doc('Recompute every balance from the ledger') },
      async () => {
        const mismatches = await auditLedger(ctx.db);
        return { balanced: mismatches.length === 0, mismatches };
      });
  };
}
