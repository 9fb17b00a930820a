import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { backendName, createTestApp, type TestApp } from './harness.ts';

// The quick start prints a funded demo key: by default nothing listens beyond this machine, and
// the metrics can be closed to strangers.

describe(`what a fresh gateway exposes [${backendName}]`, () => {
  it('listens on loopback unless HOST says otherwise', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  describe('METRICS_TOKEN', () => {
    let closed: TestApp;
    let open: TestApp;
    beforeAll(async () => {
      [closed, open] = await Promise.all([createTestApp({ METRICS_TOKEN: 'metrics-secret-123' }), createTestApp()]);
    });
    afterAll(async () => Promise.all([closed.close(), open.close()]));

    it('when set, /metrics needs it as a bearer token', async () => {
      const none = await closed.app.inject({ method: 'GET', url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toEqual({ error: { code: 401, message: expect.stringContaining('METRICS_TOKEN'), type: 'authentication_error' } });
      expect((await closed.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      const right = await closed.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-secret-123' } });
      expect(right.statusCode).toBe(200);
      expect(right.body).toContain('# TYPE');
    });

    it('when unset, /metrics is open as before', async () => {
      expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    });
  });
});
