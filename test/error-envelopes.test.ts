import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as E from '../src/core/errors.ts';
import { errorBody } from '../src/http/error-handler.ts';
import { adminHeaders, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ BODY_LIMIT_BYTES: '2048' });
  t.app.get('/v1/boom', async () => {
    throw new Error('db password is hunter2 at /srv/secret/config.ts');
  });
  t.app.get('/v1beta/boom', async () => {
    throw new Error('hunter2');
  });
});
afterAll(() => t.close());

describe('the standard error envelope', () => {
  it.each([
    [E.badRequest('x'), 400, 'invalid_request_error'],
    [E.unauthorized(), 401, 'authentication_error'],
    [E.paymentRequired(), 402, 'payment_required'],
    [E.forbidden(), 403, 'permission_error'],
    [E.rateLimited(3), 429, 'rate_limit_error'],
    [E.serverError(), 500, 'server_error'],
    [E.badGateway(), 502, 'bad_gateway'],
    [E.serviceUnavailable(), 503, 'service_unavailable'],
  ])('%s -> %i %s', (error, status, type) => {
    expect(errorBody('/v1/balance', error)).toEqual({ error: { code: status, message: error.message, type } });
  });

  it('the messages route adds "type":"error" beside the standard error', () => {
    expect(errorBody('/v1/messages', E.unauthorized('no'))).toEqual({ type: 'error', error: { code: 401, message: 'no', type: 'authentication_error' } });
  });
});

describe('the native (generateContent) error envelope', () => {
  it.each([
    [400, 'INVALID_ARGUMENT'],
    [401, 'UNAUTHENTICATED'],
    [402, 'PAYMENT_REQUIRED'],
    [403, 'PERMISSION_DENIED'],
    [404, 'NOT_FOUND'],
    [429, 'RESOURCE_EXHAUSTED'],
    [500, 'INTERNAL'],
    [502, 'BAD_GATEWAY'],
    [503, 'UNAVAILABLE'],
  ])('%i -> %s', (status, name) => {
    const error = new E.ApiError(status, E.typeForStatus(status), 'msg');
    expect(errorBody('/v1beta/models/x:generateContent', error)).toEqual({ error: { code: status, message: 'msg', status: name } });
  });
});

describe('errors through the app', () => {
  it('malformed JSON is a 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { ...adminHeaders, 'content-type': 'application/json' }, payload: '{"name":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: { code: 400, type: 'invalid_request_error', message: expect.stringMatching(/JSON/) } });
  });

  it('a body over BODY_LIMIT_BYTES is a 413 in the envelope', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/images/generations',
      headers: { ...account.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ prompt: 'x'.repeat(5000) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: { code: 413, type: 'request_too_large', message: expect.stringContaining('2048') } });
  });

  it('an unknown route is a 404 not_found_error; under /v1beta in the native envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 404, type: 'not_found_error', message: expect.any(String) } });
    const native = await t.app.inject({ method: 'POST', url: '/v1beta/nothing-here' });
    expect(native.statusCode).toBe(404);
    expect(native.json()).toEqual({ error: { code: 404, status: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('a thrown bug is a 500 that leaks nothing', async () => {
    for (const url of ['/v1/boom', '/v1beta/boom']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-request-id': 'req-abc' } });
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain('hunter2');
      expect(res.body).not.toContain('/srv');
      expect(res.json().error.code).toBe(500);
      expect(res.json().error.message).toContain('req-abc');
    }
  });

  it('a JSON type error is a 400 naming the field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders, payload: { name: 'x', balance: '5' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('balance');
  });

  it('a body that is not JSON is a clear 400; an unknown content type a 415, both in the envelope', async () => {
    const text = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { ...adminHeaders, 'content-type': 'text/plain' }, payload: 'name=x' });
    expect(text.statusCode).toBe(400);
    expect(text.json().error).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringContaining('JSON object') });
    const xml = await t.app.inject({ method: 'POST', url: '/admin/users', headers: { ...adminHeaders, 'content-type': 'application/xml' }, payload: '<a/>' });
    expect(xml.statusCode).toBe(415);
    expect(xml.json().error).toMatchObject({ code: 415, type: 'invalid_request_error' });
  });
});
