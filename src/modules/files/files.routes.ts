import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { notFound, rangeNotSatisfiable } from '../../core/errors.ts';
import type { BlobInfo } from '../../blobs/blob-store.ts';
import { byteRange } from '../../blobs/byte-range.ts';
import type { VerifiedFile } from '../../blobs/signed-urls.ts';
import { declareSurface } from '../../http/surface.ts';

// Result links: public (the signature is the credential), valid until their expiry, served from the
// file store whichever process stored the file. Stored bytes never change under a key, so the key is
// the ETag and a cache may keep the file until the link expires.

async function storedFile(ctx: AppContext, file: VerifiedFile): Promise<BlobInfo | undefined> {
  if (file.spec) return ctx.files.renders.ensure(file.key, file.spec);
  return ctx.files.store.head(file.key);
}

export function filesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: [] });
    app.route({
      method: ['GET', 'HEAD'],
      url: '/files/:name',
      schema: {
        tags: ['tasks'],
        summary: 'Download a result file through its signed link',
        params: Type.Object({ name: Type.String({ maxLength: 2048 }) }),
      },
      handler: async (request, reply) => {
        const file = ctx.files.signer.verify(request.params.name);
        if (!file) throw notFound('No such file');
        const now = Math.floor(Date.now() / 1000);
        if (file.expiresAt < now) throw notFound('This result link has expired');
        const info = await storedFile(ctx, file);
        if (!info) throw notFound('This result file is no longer stored');
        const etag = `"${file.key}"`;
        reply.header('etag', etag);
        reply.header('content-type', info.contentType);
        reply.header('accept-ranges', 'bytes');
        reply.header('cache-control', `public, max-age=${Math.max(0, file.expiresAt - now)}, immutable`);
        if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
          return reply.code(304).send();
        }
        const ifRange = request.headers['if-range'];
        const range = ifRange === undefined || ifRange === etag ? byteRange(request.headers.range, info.size) : undefined;
        if (range === 'unsatisfiable') throw rangeNotSatisfiable(info.size);
        if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${info.size}`);
        reply.header('content-length', range ? range.end - range.start + 1 : info.size);
        if (request.method === 'HEAD') return reply.send();
        const stored = await ctx.files.store.get(file.key, range);
        // Swept between the head and the get: the link's file is gone (it had expired anyway).
        if (!stored) throw notFound('This result file is no longer stored');
        return reply.send(stored.body);
      },
    });
  };
}
