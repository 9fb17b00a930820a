import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Input no well-behaved client sends: undecodable URLs, NUL characters, `throw undefined`, requests
// Node's HTTP parser refuses. Each must still get the error envelope, never Fastify's own body or a 500.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  t.app.get('/__test/throw-undefined', async () => {
    throw undefined;
  });
});
afterAll(() => t.close());

const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } });

function expectStandard(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, type: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  expect(res.json()).toEqual({ error: { code: status, message: expect.any(String), type } });
  expect(res.json().error.message.length).toBeGreaterThan(0);
}

describe(`hostile input [${backendName}]`, () => {
  it('`throw undefined` still gets the envelope (the handler must not crash on it)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/__test/throw-undefined' });
    expectStandard(res, 500, 'server_error');
    expect(res.body).not.toContain('Cannot read');
  });

  it('wrong content-type: a 4xx envelope, never a 5xx', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', ';;;']) {
      const res = await post('/admin/users', 'name=x', { ...adminHeaders, 'content-type': type });
      expect(res.statusCode, type).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, type).toBeLessThan(500);
      expect(res.json().error).toMatchObject({ code: res.statusCode, type: 'invalid_request_error' });
    }
    // The 415 names the type that was sent, not Fastify's generic phrase.
    const res = await post('/admin/users', 'a=1', { ...adminHeaders, 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.message).toContain('application/x-www-form-urlencoded');
  });

  it('a URL Fastify cannot decode, or an over-long path parameter: 4xx in our envelope with x-request-id', async () => {
    const bad = await t.app.inject({ method: 'GET', url: '/v1/tasks/%zz', headers: { 'x-request-id': 'req-bad-url', origin: 'https://app.example' } });
    expectStandard(bad, 400, 'invalid_request_error');
    expect(bad.headers['x-request-id']).toBe('req-bad-url');
    expect(bad.headers['access-control-allow-origin']).toBe('*');
    const native = await t.app.inject({ method: 'POST', url: '/v1beta/models/%zz:generateContent', payload: {} });
    expect(native.statusCode).toBe(400);
    expect(native.json().error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    const long = await t.app.inject({ method: 'GET', url: `/v1/tasks/${'a'.repeat(1500)}` });
    expect(long.statusCode).toBe(414);
    expect(long.json().error).toMatchObject({ code: 414, type: 'invalid_request_error' });
    expect(long.headers['x-request-id']).toBeTruthy();
  });

  it('a NUL (U+0000) in a path parameter, a query value or a body string: 400 on every backend', async () => {
    // Postgres text cannot hold it: before the check these were 500s there (and 200s on SQLite).
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 100 });
    const cases = [
      { method: 'GET', url: '/v1/tasks/%00', headers: account.auth },
      { method: 'GET', url: '/admin/keys?user_id=a%00', headers: adminHeaders },
      { method: 'PATCH', url: '/admin/keys/%00', headers: adminHeaders, payload: { name: 'x' } },
      { method: 'POST', url: '/admin/users', headers: adminHeaders, payload: { name: 'a\u0000b' } },
      { method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: account.user.id, unlimited: true, name: '\u0000' } },
      { method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'c', type: 'simulator', models: ['m'], model_mapping: { 'm\u0000': 'x' } } },
      { method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'deep', extra: [[[{ x: 'a\u0000' }]]] } },
    ] as const;
    for (const c of cases) {
      const res = await t.app.inject(c as any);
      expectStandard(res, 400, 'invalid_request_error');
      expect(res.json().error.message, c.url).toContain('NUL');
    }
    // Checked after the guards: without credentials it is still a 401.
    const anonymous = await t.app.inject({ method: 'POST', url: '/admin/users', payload: { name: '\u0000' } });
    expect(anonymous.statusCode).toBe(401);
    // A body nested deeper than any recursion would survive is checked without a stack overflow.
    const deep = `${'['.repeat(1000)}"\\u0000"${']'.repeat(1000)}`;
    expectStandard(await post('/v1/images/generations', deep, account.auth), 400, 'invalid_request_error');
    // '%2500' is a literal "%00", not a NUL.
    expect((await t.app.inject({ method: 'GET', url: '/admin/keys?user_id=%2500', headers: adminHeaders })).statusCode).toBe(200);
  });

  it('a body nested thousands of levels deep: a 400 in each text surface\'s envelope, never a stack overflow (500)', async () => {
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 1000 });
    const nest = (levels: number) => `${'{"type":"array","items":'.repeat(levels)}{"type":"string"}${'}'.repeat(levels)}`;
    const tool = (levels: number) => `{"name":"t","input_schema":{"type":"object","properties":{"a":${nest(levels)}}}}`;
    const messages = (levels: number) => `{"model":"chatgen-4-sonnet","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[${tool(levels)}]}`;
    const surfaces = [
      { url: '/v1/messages', body: messages(8000), error: (j: any) => j.error.type },
      { url: '/v1/messages/count_tokens', body: messages(8000), error: (j: any) => j.error.type },
      { url: '/v1/chat/completions', body: `{"model":"chatgen-4-sonnet","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${nest(8000)}}}}`, error: (j: any) => j.error.type },
      { url: '/v1/responses', body: `{"model":"chatgen-4-sonnet","input":"hi","tools":[{"type":"function","name":"f","parameters":${nest(8000)}}]}`, error: (j: any) => j.error.type },
      { url: '/gemini/v1beta/models/textgen-2.5-flash:generateContent', body: `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}}}]}]}`, error: (j: any) => j.error.status },
    ];
    for (const surface of surfaces) {
      const res = await post(surface.url, surface.body, { ...account.auth, 'x-api-key': account.key, 'x-goog-api-key': account.key });
      expect(res.statusCode, surface.url).toBe(400);
      expect(res.body, surface.url).toContain('nested more than 128 levels');
      expect(surface.error(res.json()), surface.url).toMatch(/invalid_request_error|INVALID_ARGUMENT/);
    }
    // A schema a hundred levels deep is an ordinary call.
    expect((await post('/v1/messages', messages(100), { 'x-api-key': account.key })).statusCode).toBe(200);
  });

  it('an output ceiling whose price no ledger integer holds (max_tokens 1e15): a 402, not a 500', async () => {
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 1000 });
    for (const ceiling of ['1000000000000000', '1e308']) {
      const messages = await post('/v1/messages', `{"model":"chatgen-4-sonnet","max_tokens":${ceiling},"messages":[{"role":"user","content":"hi"}]}`, { 'x-api-key': account.key });
      expect(messages.statusCode, ceiling).toBe(402);
      expect(messages.json()).toMatchObject({ type: 'error', error: { type: 'payment_required' } });
      const responses = await post('/v1/responses', `{"model":"chatgen-4-sonnet","max_output_tokens":${ceiling},"input":"hi"}`, account.auth);
      expect(responses.statusCode, ceiling).toBe(402);
    }
  });

});

/** Writes raw bytes to the server and reads until it closes: for requests no HTTP client would send. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (out += chunk));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(text.slice(0, 40))}`)));
  });
}

describe('requests the HTTP parser refuses (real port)', () => {
  it('a bad header line, oversized headers, garbage: the envelope on the wire, then the socket closes', async () => {
    const own = await createTestApp();
    try {
      const port = Number(new URL(await own.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const cases: [string, number][] = [
        ['GET /v1/balance HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n', 400],
        [`GET /v1/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
        ['NOT HTTP AT ALL\r\n\r\n', 400],
        ['POST /admin/users HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
        ['POST /admin/users HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
      ];
      for (const [text, status] of cases) {
        const answer = await rawExchange(port, text);
        const [head, body] = answer.split('\r\n\r\n');
        expect(head, text.slice(0, 40)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(head.toLowerCase()).toContain('content-type: application/json');
        expect(JSON.parse(body)).toEqual({ error: { code: status, message: expect.any(String), type: 'invalid_request_error' } });
      }
      // The server is unharmed.
      const ok = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(ok).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      await own.close();
    }
  });
});
