import fs from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { CONTENT_TYPES } from './render-cache.ts';

// Result links: public (the signature is the credential), valid until their expiry.
export function filesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/files/:name',
      {
        schema: {
          tags: ['tasks'],
          summary: 'Download a result file through its signed link',
          params: Type.Object({ name: Type.String({ maxLength: 2048 }) }),
        },
      },
      async (request, reply) => {
        const file = ctx.files.signer.verify(request.params.name);
        if (!file) throw notFound('No such file');
        if (file.expiresAt < Math.floor(Date.now() / 1000)) throw notFound('This result link has expired');
        const path = await ctx.files.cache.get(request.params.name, file);
        const extension = request.params.name.split('.').pop()!;
        const { size } = await fs.promises.stat(path);
        reply.header('content-type', CONTENT_TYPES[extension] ?? 'application/octet-stream');
        reply.header('content-length', size);
        reply.header('cache-control', `public, max-age=${Math.max(0, file.expiresAt - Math.floor(Date.now() / 1000))}, immutable`);
        return reply.send(fs.createReadStream(path));
      },
    );
  };
}
