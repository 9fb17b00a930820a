import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('health, metrics, documentation, request ids', () => {
  it('/healthz and /readyz (which checks the database) answer 200', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('/metrics counts requests by route and status, with a latency histogram', async () => {
    const account = await seedAccount(t.ctx, 1);
    await t.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/gateway_http_requests_total\{method="GET",route="\/v1\/balance",status="200"\} \d+/);
    expect(res.body).toContain('gateway_http_request_duration_seconds_bucket');
  });

  it('/metrics: counts per status are exact and the histogram buckets are cumulative', async () => {
    const account = await seedAccount(t.ctx, 1);
    const before = await t.app.inject({ method: 'GET', url: '/metrics' });
    const count = (body: string, status: number) => Number(new RegExp(`gateway_http_requests_total\\{method="GET",route="/v1/tasks/:id",status="${status}"\\} (\\d+)`).exec(body)?.[1] ?? 0);
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/v1/tasks/task_missing', headers: account.auth });
    await t.app.inject({ method: 'GET', url: '/v1/tasks/task_missing' });
    const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(count(body, 404) - count(before.body, 404)).toBe(3);
    expect(count(body, 401) - count(before.body, 401)).toBe(1);
    const series = 'gateway_http_request_duration_seconds';
    const buckets = [...body.matchAll(new RegExp(`${series}_bucket\\{method="GET",route="/v1/tasks/:id",le="([^"]+)"\\} (\\d+)`, 'g'))].map((m) => [m[1], Number(m[2])] as const);
    expect(buckets.at(-1)![0]).toBe('+Inf');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]![1]).toBeGreaterThanOrEqual(buckets[i - 1]![1]);
    const total = Number(new RegExp(`${series}_count\\{method="GET",route="/v1/tasks/:id"\\} (\\d+)`).exec(body)?.[1]);
    expect(buckets.at(-1)![1]).toBe(total);
    expect(total).toBeGreaterThanOrEqual(4);
    expect(body).toMatch(new RegExp(`${series}_sum\\{method="GET",route="/v1/tasks/:id"\\} [0-9.e-]+`));
  });

  it('/openapi.json is OpenAPI 3.1 with the routes and their schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/v1/balance', '/balance', '/v1/user/balance', '/user/balance', '/v1/images/generations', '/v1/videos/generations', '/v1/tasks/{id}', '/admin/users', '/admin/keys', '/admin/channels']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.paths['/v1/balance'].get.responses['200'].content['application/json'].schema.properties).toHaveProperty('unlimited_quota');
    expect(doc.paths['/v1/images/generations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('n');
  });

  it('/docs serves an interactive page with no external CDN', async () => {
    let res = await t.app.inject({ method: 'GET', url: '/docs' });
    if (res.statusCode >= 300 && res.statusCode < 400) res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).not.toMatch(/(src|href)="https?:\/\//);
  });

  it('every response carries x-request-id; a valid incoming one is echoed', async () => {
    const fresh = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(fresh.headers['x-request-id']).toMatch(/^[\w-]{8,}$/);
    const echoed = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'trace-42' } });
    expect(echoed.headers['x-request-id']).toBe('trace-42');
    const junk = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(junk.headers['x-request-id']).not.toBe('bad id with spaces');
  });
});
