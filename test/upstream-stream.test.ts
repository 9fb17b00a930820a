import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestSignal } from '../src/lib/call-signal.ts';
import { requestStreamed } from '../src/providers/upstream-stream.ts';

// The streamed upstream body of upstream-stream.ts against a real local server: a slow reader
// pauses the connection and still gets every byte in order; a reader that stops early closes the
// connection; a server that cuts the answer off is an error after the bytes that came.

const PIECE = 4096;
const PIECES = 1024; // 4 MiB: far past the body's high-water mark
let server: http.Server;
let pool: Pool;
let closedEarly = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    if (req.url === '/endless') {
      const timer = setInterval(() => res.write(Buffer.alloc(PIECE, 1)), 5);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/cut') {
      res.write('first bytes');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    let sent = 0;
    const more = () => {
      while (sent < PIECES) {
        const piece = Buffer.alloc(PIECE, sent % 251);
        sent++;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await pool.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, signal = new RequestSignal()) => requestStreamed(pool, { path, method: 'GET', headersTimeout: 5000, bodyTimeout: 5000 }, signal);

describe('a streamed upstream body', () => {
  it('a slow reader gets every byte in order', async () => {
    const response = await get('/big');
    expect(response.statusCode).toBe(200);
    const received: Buffer[] = [];
    for await (const chunk of response.body) {
      received.push(chunk);
      await new Promise((r) => setTimeout(r, 2));
    }
    const all = Buffer.concat(received);
    expect(all.length).toBe(PIECE * PIECES);
    for (let i = 0; i < PIECES; i++) expect(all[i * PIECE]).toBe(i % 251);
  });

  it('a reader that stops early closes the connection', async () => {
    const before = closedEarly;
    const response = await get('/endless');
    for await (const chunk of response.body) if (chunk.length > 0) break;
    for (let i = 0; i < 100 && closedEarly === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(closedEarly).toBe(before + 1);
  });

  it('an answer cut off is an error after the bytes that came', async () => {
    const response = await get('/cut');
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of response.body) text += chunk.toString();
      })(),
    ).rejects.toThrow();
    expect(text).toBe('first bytes');
  });

  it("the caller's abort ends the read with its reason", async () => {
    const signal = new RequestSignal();
    const response = await get('/big', signal);
    const reason = new Error('caller left');
    await expect(
      (async () => {
        for await (const _ of response.body) {
          signal.abort(reason);
          await new Promise((r) => setTimeout(r, 5));
        }
      })(),
    ).rejects.toBe(reason);
  });
});
