import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { adminGuard } from '../../http/auth.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { CHANNEL_TYPES } from '../../providers/registry.ts';
import { channelTypesView, knownType } from './channel-options.ts';
import { testChannel } from './channel-test.ts';
import * as S from './channels.schemas.ts';
import { changeChannel, createChannel, findChannels, removeChannel } from './channels.service.ts';
import { ADMIN_SURFACE, declareSurface } from '../../http/surface.ts';

export function channelsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, ADMIN_SURFACE);
    app.addHook('preValidation', adminGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['admin'], summary, security: [{ admin: [] }] });
    // Each change also drops this process's routing cache; other processes re-read within a second.
    const changed = <T>(value: T) => {
      ctx.channels.invalidate();
      return value;
    };
    // Before the schema's check: an unknown type is refused naming the known ones, not as "must be
    // equal to one of the allowed values".
    const typeFirst = async (request: { body: unknown }) => {
      const type = (request.body as { type?: unknown } | null)?.type;
      if (typeof type === 'string') knownType(type);
    };

    app.post('/admin/channels', { preValidation: typeFirst, schema: doc('Add an upstream channel', { body: S.CreateChannelBody, response: { 201: S.Channel, ...ErrorResponses } }) },
      async (request, reply) => reply.status(201).send(changed(await createChannel(ctx.db, request.body))));

    app.get('/admin/channels', { schema: doc('List channels (secrets are never shown)', { response: { 200: Type.Object({ data: Type.Array(S.Channel) }) } }) },
      async () => ({ data: await findChannels(ctx.db) }));

    app.get('/admin/channel-types', { schema: doc('The channel types: what each serves and its options schema', { response: { 200: Type.Object({ data: Type.Array(S.ChannelType) }) } }) },
      async () => ({ data: channelTypesView(CHANNEL_TYPES) }));

    app.patch('/admin/channels/:id', { preValidation: typeFirst, schema: doc('Change a channel', { params: IdParams, body: S.UpdateChannelBody, response: { 200: S.Channel, ...ErrorResponses } }) },
      async (request) => changed(await changeChannel(ctx.db, request.params.id, request.body)));

    app.delete('/admin/channels/:id', { schema: doc('Remove a channel', { params: IdParams, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }), ...ErrorResponses } }) },
      async (request) => changed(await removeChannel(ctx.db, request.params.id)));

    const TestResult = Type.Object({ ok: Type.Boolean(), latency_ms: Type.Integer(), detail: Type.String() });
    app.post('/admin/channels/:id/test', { schema: doc('Make one small real call through the channel (not billed)', { params: IdParams, response: { 200: TestResult, ...ErrorResponses } }) },
      (request) => testChannel(ctx, request.params.id));
  };
}
