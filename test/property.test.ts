import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Random JSON and random headers at every route: only 4xx envelopes (or a success), never a 500,
// never a dropped connection.

let t: TestApp;
const routes: { method: string; url: string }[] = [];
let apiKey = '';

beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0', BODY_LIMIT_BYTES: '65536' });
  // Every documented route, plus the undocumented operational ones.
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  for (const [url, operations] of Object.entries<Record<string, unknown>>(doc.paths)) {
    for (const method of Object.keys(operations)) routes.push({ method: method.toUpperCase(), url: url.replace(/\{(\w+)\}/g, ':$1') });
  }
  routes.push({ method: 'GET', url: '/metrics' }, { method: 'GET', url: '/openapi.json' }, { method: 'OPTIONS', url: '/v1/balance' });
  apiKey = (await seedAccount(t.ctx, 1000, { unlimited: true, rate_limit_rpm: 1_000_000 })).key;
});
afterAll(() => t.close());

const path = (url: string, id: string) => url.replace(/:[a-z]+/g, encodeURIComponent(id) || 'x');

const headers = fc.record(
  {
    authorization: fc.oneof(fc.constant(`Bearer ${ADMIN_TOKEN}`), fc.constant('Bearer KEY'), fc.string(), fc.constant('Bearer '), fc.constant('Basic Zm9vOmJhcg==')),
    'content-type': fc.oneof(fc.constant('application/json'), fc.constant('text/plain'), fc.constant('application/json; charset=utf-8'), fc.string({ maxLength: 30 })),
    'x-api-key': fc.oneof(fc.constant('KEY'), fc.string({ maxLength: 60 })),
    'x-request-id': fc.string({ maxLength: 200 }),
    'vendor-version': fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.record({ prompt: fc.string(), n: fc.oneof(fc.integer(), fc.string()), model: fc.string(), size: fc.string(), resolution: fc.string() }).map((v) => JSON.stringify(v)),
  fc.record({ name: fc.string(), balance: fc.oneof(fc.double(), fc.string()), amount: fc.double(), user_id: fc.string(), quota: fc.double() }).map((v) => JSON.stringify(v)),
  fc.string(),
);

function checkResponse(status: number, text: string, method: string) {
  expect(status).toBeLessThan(500);
  // An answer to HEAD has no body, an error's included (HTTP): only its status is checked.
  if (status >= 400 && method !== 'HEAD') {
    const parsed = JSON.parse(text);
    expect(parsed.error.code).toBe(status);
    expect(typeof parsed.error.message).toBe('string');
  }
}

describe('property: random requests at every route', () => {
  it('never answer 5xx, and every error is an envelope whose code is the status', async () => {
    expect(routes.length).toBeGreaterThan(10);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
        fc.boolean(),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        headers,
        body,
        async (route, otherMethod, sameMethod, id, query, hdrs, payload) => {
          const method = (sameMethod ? route.method : otherMethod) as 'GET';
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(hdrs)) h[k] = String(v).replace('KEY', apiKey).replace(/[^\t\x20-\x7e]/g, '');
          const url = `${path(route.url, id)}?${encodeURIComponent(query)}=${encodeURIComponent(id)}`;
          const res = await t.app.inject({ method, url, headers: h, payload: method === 'GET' || method === 'DELETE' ? undefined : payload });
          checkResponse(res.statusCode, res.body, method);
        },
      ),
      { numRuns: 800 },
    );
  }, 120_000);

  it('over a real port: no dropped connection, no 5xx', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.string({ maxLength: 20 }), headers, body, async (route, id, hdrs, payload) => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(hdrs)) h[k] = String(v).replace('KEY', apiKey).replace(/[^\t\x20-\x7e]/g, '');
        const res = await request(`${base}${path(route.url, id)}`, {
          method: route.method as 'GET',
          headers: h,
          body: route.method === 'GET' || route.method === 'DELETE' ? undefined : payload,
        });
        checkResponse(res.statusCode, await res.body.text(), route.method);
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
