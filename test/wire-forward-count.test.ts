import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A same-format chat stream is forwarded as the bytes that came (providers/wire-forward.ts); what
// it forwarded is kept (lib/kept-bytes.ts) and read only when the upstream never reported its
// output: then the call pays our count of the text that went to the caller.

let t: TestApp;
let base: string;
let upstream: http.Server;
let mode: 'no-usage' | 'cut' = 'no-usage';
const WORDS = ['alpha ', 'beta ', 'gamma ', 'delta ', 'epsilon'];

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'textgen-2.5-pro', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      for (const word of WORDS) res.write(chunk({ content: word }));
      if (mode === 'cut') return void setTimeout(() => res.socket?.destroy(), 20);
      res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const channel = { name: 'raw-chat', type: 'openai', base_url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, secret: 'sk-raw', models: ['textgen-2.5-pro'], priority: 10 };
  expect((await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: channel })).statusCode).toBe(201);
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => m !== 'textgen-2.5-pro') } });
});
afterAll(async () => {
  await t.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

async function streamed(userId: string, key: string) {
  const res = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'textgen-2.5-pro', stream: true, messages: [{ role: 'user', content: 'count' }] }),
  });
  const text = await res.body.text();
  const usage = () => t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', userId).execute();
  for (let i = 0; i < 100 && (await usage()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  return { text, row: (await usage())[0]! };
}

describe(`a forwarded chat stream without the upstream's count [${backendName}]`, () => {
  it('ended without a usage chunk: pays our count of the text it forwarded', async () => {
    mode = 'no-usage';
    const account = await seedAccount(t.ctx, 1);
    const { text, row } = await streamed(account.user.id, account.key);
    expect(text).toContain('epsilon');
    expect(text).toContain('[DONE]');
    expect(row).toMatchObject({ status: 'ok' });
    expect(row.output_tokens).toBeGreaterThanOrEqual(WORDS.length);
    expect(row.output_tokens).toBeLessThan(20);
  });

  it('cut off by the upstream midway: pays for what reached the caller, many at once', async () => {
    mode = 'cut';
    const accounts = await Promise.all(Array.from({ length: 6 }, () => seedAccount(t.ctx, 1)));
    const results = await Promise.all(accounts.map((a) => streamed(a.user.id, a.key)));
    for (const { text, row } of results) {
      expect(text).toContain('epsilon');
      expect(row.status).not.toBe('ok');
      expect(row.output_tokens).toBeGreaterThanOrEqual(WORDS.length);
      expect(row.output_tokens).toBeLessThan(20);
    }
  });
});
