import net from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, type TestApp } from './harness.ts';

// Clients that never finish their request, and requests the HTTP parser refuses, on a real port:
// neither can be seen through inject.

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp({ REQUEST_TIMEOUT_MS: '1200', HEADERS_TIMEOUT_MS: '1200' });
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(() => t.close());

interface Exchange {
  answer: string;
  closedAfterMs: number;
}

/** Writes `parts` (pausing between them), reads until the server closes, and times that close. */
function exchange(parts: string[], gapMs = 0, giveUpMs = 8000): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', async () => {
      for (const part of parts) {
        if (socket.destroyed) break;
        socket.write(part);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
    socket.on('error', () => {});
    socket.setTimeout(giveUpMs, () => {
      socket.destroy();
      reject(new Error(`the server still held the connection after ${giveUpMs} ms`));
    });
  });
}

function parsed(answer: string) {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head ?? '')?.[1]), head: head ?? '', body: JSON.parse(body ?? 'null') };
}

describe(`slow senders (REQUEST_TIMEOUT_MS) [${backendName}]`, () => {
  it('a body that stops short of its Content-Length is answered 408 and the connection closed', async () => {
    const { answer, closedAfterMs } = await exchange([
      'POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    ]);
    const { status, head, body } = parsed(answer);
    expect(status).toBe(408);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(body).toEqual({ error: { code: 408, message: expect.stringContaining('REQUEST_TIMEOUT_MS'), type: 'invalid_request_error' } });
    expect(closedAfterMs).toBeGreaterThanOrEqual(1000);
  });

  // The parser keeps an unfinished head to itself, so its route is unknown: the standard envelope.
  it('a head sent one byte at a time is cut off too', async () => {
    const head = 'POST /v1beta/models/x:generateContent HTTP/1.1\r\nHost: x\r\nX-Slow: ';
    const { answer } = await exchange([head, ...'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'], 100);
    const { status, body } = parsed(answer);
    expect(status).toBe(408);
    expect(body).toEqual({ error: { code: 408, message: expect.any(String), type: 'invalid_request_error' } });
  });

  it('hundreds of stalled requests are all closed, and /healthz answers all the while', async () => {
    const stalled = Array.from({ length: 300 }, () =>
      exchange(['POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{']),
    );
    await new Promise((r) => setTimeout(r, 300));
    const health = await request(`http://127.0.0.1:${port}/healthz`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    const answers = await Promise.all(stalled);
    for (const { answer } of answers) {
      const { status, body } = parsed(answer);
      expect(status).toBe(408);
      expect(body).toEqual({ type: 'error', error: { code: 408, message: expect.any(String), type: 'invalid_request_error' } });
    }
  });
});

describe(`parser-level errors in their route's envelope [${backendName}]`, () => {
  const bigHeader = `X-Big: ${'a'.repeat(20_000)}\r\n`;
  it.each([
    ['/v1beta/models/x:generateContent', { error: { code: 431, message: 'Request headers are too large', status: 'INVALID_ARGUMENT' } }],
    ['/v1/messages', { type: 'error', error: { code: 431, message: 'Request headers are too large', type: 'invalid_request_error' } }],
    ['/v1/balance', { error: { code: 431, message: 'Request headers are too large', type: 'invalid_request_error' } }],
  ])('431 on %s', async (path, expected) => {
    const { answer } = await exchange([`POST ${path} HTTP/1.1\r\nHost: x\r\n${bigHeader}\r\n`]);
    const { status, body } = parsed(answer);
    expect(status).toBe(431);
    expect(body).toEqual(expected);
  });

  it('many small header lines over the limit on /v1beta: still the native envelope', async () => {
    const many = Array.from({ length: 400 }, (_, i) => `h${i}: ${'v'.repeat(50)}\r\n`).join('');
    const { answer } = await exchange([`GET /v1beta/models/x:countTokens HTTP/1.1\r\nHost: x\r\n${many}\r\n`]);
    expect(parsed(answer).body).toEqual({ error: { code: 431, message: 'Request headers are too large', status: 'INVALID_ARGUMENT' } });
  });

  it('a malformed header on /v1/messages: 400 in the messages envelope', async () => {
    const { answer } = await exchange(['POST /v1/messages HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n']);
    expect(parsed(answer)).toMatchObject({ status: 400, body: { type: 'error', error: { code: 400, type: 'invalid_request_error' } } });
  });
});
