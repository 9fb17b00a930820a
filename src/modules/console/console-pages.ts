import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { serviceUnavailable } from '../../core/errors.ts';
import { declareSurface } from '../../http/surface.ts';

// The console is a static single-page app built by Vite (`npm run build:console`) into
// CONSOLE_DIST_DIR and served from here: no CDN, no second server. It routes with the URL hash, so the
// gateway only ever serves /console/ and the hashed asset files.

function securityHeaders(ctx: AppContext): Record<string, string> {
  const resultOrigin = new URL(ctx.config.publicBaseUrl).origin;
  return {
    'content-security-policy': `default-src 'self'; img-src 'self' data: ${resultOrigin}; media-src 'self' ${resultOrigin}; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  };
}

/** A plugin: its declaration covers only the pages. */
export async function registerConsolePages(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const root = path.resolve(ctx.config.console.distDir);
  const built = fs.existsSync(path.join(root, 'index.html'));
  const headers = securityHeaders(ctx);
  declareSurface(app, { envelope: 'standard', keySources: [] });
  app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/'));
  if (!built) {
    app.get('/console/', { schema: { hide: true } }, async () => {
      throw serviceUnavailable(`The console is not built: run npm run build:console (looked in ${root})`);
    });
    return;
  }
  // Browsers ask for /favicon.ico on every page of the host (the API docs too): the console's icon,
  // not a 404 in every log.
  const icon = path.join(root, 'favicon.ico');
  if (fs.existsSync(icon)) {
    const bytes = fs.readFileSync(icon);
    app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
      reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(bytes));
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    wildcard: false,
    index: ['index.html'],
    setHeaders(reply, filePath) {
      reply.headers(headers);
      // Vite names assets by content hash: they never change under one name.
      reply.header('cache-control', filePath.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
