import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A callback address that breaks a rule is dropped silently for the caller (the submit
// succeeds, nothing is ever sent). The operator still sees why: a `refused` delivery record.

let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' });
  auth = (await seedAccount(t.ctx, 10)).auth;
});
afterAll(() => t.close());

async function deliveries(taskId: string) {
  // The record is written just after the submit answers.
  for (let i = 0; i < 50; i++) {
    const res = await t.app.inject({ method: 'GET', url: `/admin/tasks/${taskId}/deliveries`, headers: adminHeaders });
    if (res.json().data.length > 0) return res.json().data;
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

describe(`a refused callback address leaves a trace [${backendName}]`, () => {
  it.each([
    ['http://localhost:3000', /localhost is this service/],
    ['ftp://hooks.example.com', /scheme ftp: is not http or https/],
    ['not an address', /not a valid http or https address/],
  ])('%s: the submit succeeds, and the task shows one refused delivery with the reason', async (webhook, reason) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...auth, 'content-type': 'application/json' }, payload: { model: 'imggen-2', prompt: 'a kite', webhook } });
    expect(res.statusCode).toBe(200);
    const taskId = res.json().data[0].task_id;
    const [record, ...more] = await deliveries(taskId);
    expect(more).toEqual([]);
    expect(record).toMatchObject({ outcome: 'refused', status_code: null, attempt: 0 });
    expect(record.error).toMatch(reason);
    expect(record.url).toContain(webhook === 'not an address' ? 'not an address' : new URL(webhook).host);
  });

  it('an avatar submit records its refused address too', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/seedance2/private-avatar',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: { group: { name: 'g', description: 'd' }, url: 'https://example.com/a.png', name: 'a', webhook: 'http://localhost:3000/hooks' },
    });
    expect(res.statusCode).toBe(200);
    const [record] = await deliveries(res.json().data.id);
    expect(record).toMatchObject({ outcome: 'refused', url: 'http://localhost:3000/hooks/callback' });
  });
});
