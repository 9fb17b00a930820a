import fs from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { byteRange } from './byte-range.ts';
import { CONTENT_TYPES } from './render-cache.ts';
import { extensionOf } from './signed-urls.ts';

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
        const { size } = await fs.promises.stat(path);
        reply.header('content-type', CONTENT_TYPES[extensionOf(file.spec)] ?? 'application/octet-stream');
        reply.header('accept-ranges', 'bytes');
        reply.header('cache-control', `public, max-age=${Math.max(0, file.expiresAt - Math.floor(Date.now() / 1000))}, immutable`);
        const range = byteRange(request.headers.range, size);
        if (!range) return reply.header('content-length', size).send(fs.createReadStream(path));
        reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
        return reply.header('content-length', range.end - range.start + 1).send(fs.createReadStream(path, range));
      },
    );
  };
}
