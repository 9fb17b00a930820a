import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../src/http/error-handler.ts';
import { badRequest } from '../src/core/errors.ts';
import { collectRoutes, declaredRoutes } from '../src/http/route-table.ts';
import { declareSurface } from '../src/http/surface.ts';
import { backendName, createTestApp, type TestApp } from './harness.ts';

// Each route declares its error envelope and where it reads a key (http/surface.ts); nothing is
// decided by URL prefix. buildApp refuses to finish when one of its routes declares nothing, so the
// app built here is itself the proof that every route of the gateway declares.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe(`route declarations [${backendName}]`, () => {
  it('a route that declares no envelope or key sources is refused at start-up, named by method and path', async () => {
    const app = Fastify();
    const routes = collectRoutes(app);
    await app.register(async (declared) => {
      declareSurface(declared, { envelope: 'standard', keySources: ['bearer'] });
      declared.get('/declared', async () => 'ok');
    });
    await app.register(async (forgotten) => {
      forgotten.post('/forgotten', async () => 'ok');
    });
    let refused: Error | undefined;
    try {
      routes.check();
    } catch (err) {
      refused = err as Error;
    }
    expect(refused?.message).toContain('POST /forgotten');
    expect(refused?.message).not.toContain('/declared');
    await app.close();
  });

  it('the declaration decides the envelope, not the path', async () => {
    const app = Fastify();
    registerErrorHandling(app, 1024);
    await app.register(async (scope) => {
      declareSurface(scope, { envelope: 'openai', keySources: ['bearer'] });
      scope.get('/v1beta/declared-openai', async () => {
        throw badRequest('no');
      });
    });
    const res = await app.inject({ method: 'GET', url: '/v1beta/declared-openai' });
    expect(res.json()).toEqual({ error: { code: 400, message: 'no', type: 'invalid_request_error', param: null } });
    await app.close();
  });

  it('where no route is at hand, the declared routes that share the path decide; when they differ, the standard envelope', () => {
    expect(declaredRoutes.familyFor('POST', '/v1/chat/completions')).toBe('openai');
    expect(declaredRoutes.familyFor('GET', '/v1/chat/nothing')).toBe('openai');
    expect(declaredRoutes.familyFor('GET', '/v1/messages')).toBe('messages');
    expect(declaredRoutes.familyFor(undefined, '/gemini/v1beta/models/x:generateContent?key=k')).toBe('native');
    expect(declaredRoutes.familyFor('DELETE', '/v1beta/anything/else')).toBe('native');
    // The CORS preflight serves every path but speaks the envelope of the route the path belongs to.
    expect(declaredRoutes.familyFor('OPTIONS', '/v1/messages')).toBe('messages');
    expect(declaredRoutes.familyFor('GET', '/v1/nothing')).toBe('standard');
    expect(declaredRoutes.familyFor(undefined, '/')).toBe('standard');
  });

  it('an unknown path answers in the envelope its neighbours declare', async () => {
    const chat = await t.app.inject({ method: 'POST', url: '/v1/chat/nothing' });
    expect(chat.statusCode).toBe(404);
    expect(chat.json()).toEqual({ error: { code: 404, message: expect.any(String), type: 'not_found_error', param: null } });
  });
});
