import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// The simulator judges sampling values as the vendors do on the surfaces whose schema leaves them to
// the upstream (messages: temperature and top_p 0..1, top_k >= 0; Responses: temperature 0..2,
// top_p 0..1): a 400 in the surface's envelope, whole or streamed, and nothing charged.

let t: TestApp;
let auth: Record<string, string>;
let balance: () => Promise<number>;
const MODEL = 'chatgen-4-haiku';

beforeAll(async () => {
  t = await createTestApp();
  const seeded = await seedAccount(t.ctx, 10);
  auth = seeded.auth;
  balance = async () => (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: auth })).json().remain_credits;
});
afterAll(async () => t?.close());

const messages = (extra: object) =>
  t.app.inject({ method: 'POST', url: '/v1/messages', headers: auth, payload: { model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], ...extra } });
const responses = (extra: object) => t.app.inject({ method: 'POST', url: '/v1/responses', headers: auth, payload: { model: MODEL, input: 'hi', ...extra } });

describe(`the simulator refuses sampling values out of the vendor's range [${backendName}]`, () => {
  it('messages: temperature, top_p and top_k outside their ranges are a 400 naming the field; the edges pass', async () => {
    const before = await balance();
    for (const [extra, field] of [[{ temperature: -7 }, 'temperature'], [{ temperature: 1.5 }, 'temperature'], [{ top_p: 2 }, 'top_p'], [{ top_k: -1 }, 'top_k']] as const) {
      for (const stream of [false, true]) {
        const res = await messages({ ...extra, stream });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
        expect(res.json().error.message).toContain(field);
      }
    }
    expect(await balance()).toBe(before);
    for (const extra of [{ temperature: 0 }, { temperature: 1 }, { top_p: 1 }, { top_k: 0 }]) expect((await messages(extra)).statusCode).toBe(200);
  });

  it('Responses: temperature above 2 or top_p above 1 is a 400 in the OpenAI envelope; temperature 2 passes', async () => {
    const before = await balance();
    for (const [extra, field] of [[{ temperature: 2.5 }, 'temperature'], [{ temperature: -0.1 }, 'temperature'], [{ top_p: 1.01 }, 'top_p']] as const) {
      for (const stream of [false, true]) {
        const res = await responses({ ...extra, stream });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toMatchObject({ type: 'invalid_request_error' });
        expect(res.json().error.message).toContain(field);
      }
    }
    expect(await balance()).toBe(before);
    expect((await responses({ temperature: 2, top_p: 0 })).statusCode).toBe(200);
  });
});
