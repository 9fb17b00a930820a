import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A stream answered to a client whose socket is not a TCP socket (light-my-request's, here): the
// events arrive. Setting the socket's no-delay option threw there, after the reply was hijacked,
// and the request was left without an answer.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe(`a stream to a socket that is not TCP [${backendName}]`, () => {
  it('is answered whole, on the messages and chat surfaces', async () => {
    const account = await seedAccount(t.ctx, 1);
    const headers = { 'x-api-key': account.key, authorization: `Bearer ${account.key}` };
    const messages = await t.app.inject({ method: 'POST', url: '/v1/messages', headers, payload: { model: 'chatgen-4-haiku', max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(messages.statusCode).toBe(200);
    expect(messages.body).toContain('event: message_stop');
    const chat = await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: { model: 'chatgen-4-haiku', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.statusCode).toBe(200);
    expect(chat.body).toContain('data: [DONE]');
  });
});
