import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Some upstreams (OpenAI-compatible relays above all) echo the credential they were sent in the
// message of their refusal. That message reaches the caller (a 400's text, a failed task's error)
// and the call log the account holder reads: the channel's credentials must never be in any of them.

const SECRET = 'sk-channel-0123456789abcdefSECRET';
// A secret option: extra headers for a proxy in front of the upstream.
const PROXY_KEY = 'proxy-credential-987654321';
let upstream: http.Server;
let t: TestApp;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Invalid request for the token "${req.headers.authorization}" via ${req.headers['x-proxy-key']}`, type: 'invalid_request_error' } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  t = await createTestApp({}, undefined, { workers: true });
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: 'echoing', type: 'openai', base_url: url, secret: SECRET, models: ['textgen-2.5-pro', 'imggen-2'], priority: 100, options: { headers: { 'x-proxy-key': PROXY_KEY } } },
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => {
  await t.close();
  upstream.close();
});

async function calls(userId: string) {
  // The call log row is written once the call has ended.
  for (let i = 0; i < 100; i++) {
    const res = await t.app.inject({ method: 'GET', url: `/admin/calls?user_id=${userId}`, headers: adminHeaders });
    if (res.json().data.length > 0) return res.body;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no call logged');
}

describe(`an upstream refusal that echoes the channel's secret [${backendName}]`, () => {
  it('a text call, whole and streamed: the caller and the call log get the message without it', async () => {
    for (const stream of [false, true]) {
      const account = await seedAccount(t.ctx, 5);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: account.auth,
        payload: { model: 'textgen-2.5-pro', stream, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain('Invalid request for the token');
      for (const secret of [SECRET, PROXY_KEY]) {
        expect(res.body).not.toContain(secret);
        expect(await calls(account.user.id)).not.toContain(secret);
      }
    }
  });

  it("an image task: the failed task's error (and so its callback) without it", async () => {
    const account = await seedAccount(t.ctx, 5);
    const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'a fox' } });
    expect(submit.statusCode).toBe(200);
    const id = submit.json().data[0].task_id as string;
    let task: { status: string; error?: { message: string } } = { status: 'submitted' };
    for (let i = 0; i < 250 && task.status !== 'failed' && task.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: account.auth })).json().data;
    }
    expect(task.status).toBe('failed');
    expect(task.error!.message).toContain('Invalid request for the token');
    expect(task.error!.message).not.toContain(SECRET);
    expect(task.error!.message).not.toContain(PROXY_KEY);
  });
});
