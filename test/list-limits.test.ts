import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A page of no rows is not a page: `limit=0` was read as "the default" and answered a full page.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
  await seedAccount(t.ctx, 1);
  await seedAccount(t.ctx, 1);
});
afterAll(() => t.close());

describe(`list limits [${backendName}]`, () => {
  it.each(['/admin/users', '/admin/calls', '/admin/codes'])('%s: limit=0 (or 007) is a 400 naming limit; limit=1 answers one row at most', async (url) => {
    for (const limit of ['0', '007']) {
      const refused = await t.app.inject({ method: 'GET', url: `${url}?limit=${limit}`, headers: adminHeaders });
      expect(refused.statusCode, limit).toBe(400);
      expect(refused.json().error.message).toContain('limit');
    }
    const one = await t.app.inject({ method: 'GET', url: `${url}?limit=1`, headers: adminHeaders });
    expect(one.statusCode).toBe(200);
    expect(one.json().data.length).toBeLessThanOrEqual(1);
  });
});
