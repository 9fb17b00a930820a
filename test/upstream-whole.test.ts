import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestSignal } from '../src/lib/call-signal.ts';
import { UpstreamAnswerCut } from '../src/providers/upstream-read.ts';
import { requestWhole } from '../src/providers/upstream-whole.ts';

// The dispatch handler that reads a non-streamed upstream answer whole, against a real local server.

let server: http.Server;
let pool: Pool;
let closedEarly = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    if (req.url === '/chunks') {
      // Three writes some time apart, the first ending in half of a two-byte character.
      res.writeHead(200, { 'content-type': 'application/json' });
      const e = Buffer.from('é');
      res.write(Buffer.concat([Buffer.from('{"text":"'), e.subarray(0, 1)]));
      setTimeout(() => res.write(Buffer.concat([e.subarray(1), Buffer.from('clair",')])), 20);
      setTimeout(() => res.end('"n":3}'), 40);
      return;
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write('x'.repeat(1024)), 5);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/trickle') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    // /never: headers only, then nothing.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await pool.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string) => ({ path, method: 'GET' as const });

async function waitFor(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('reading an upstream answer whole', () => {
  it('joins the chunks of an answer, a character split between them included', async () => {
    const answer = await requestWhole(pool, get('/chunks'), new RequestSignal());
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ text: 'éclair', n: 3 });
  });

  it('cuts off an answer over the size limit and closes its connection', async () => {
    const before = closedEarly;
    await expect(requestWhole(pool, get('/big'), new RequestSignal(), 16 * 1024)).rejects.toThrow(/over 16384 bytes/);
    await waitFor(() => closedEarly > before);
    expect(closedEarly).toBe(before + 1);
  });

  it('cuts off an answer that trickles past bodyTimeout in total (each byte well inside it) and closes its connection', async () => {
    const before = closedEarly;
    const err = await requestWhole(pool, { ...get('/trickle'), bodyTimeout: 300 }, new RequestSignal()).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerCut);
    expect(err.reason).toBe('too_slow');
    await waitFor(() => closedEarly > before);
    expect(closedEarly).toBe(before + 1);
  });

  it("stops the upstream call when the caller's signal aborts, with the signal's reason", async () => {
    const before = closedEarly;
    const signal = new RequestSignal();
    const answer = requestWhole(pool, get('/never'), signal);
    setTimeout(() => signal.abort(new Error('caller left')), 30);
    await expect(answer).rejects.toThrow('caller left');
    await waitFor(() => closedEarly > before);
    expect(closedEarly).toBe(before + 1);
  });

  it('a signal that has already aborted sends nothing', async () => {
    const signal = new RequestSignal();
    signal.abort(new Error('gone already'));
    await expect(requestWhole(pool, get('/chunks'), signal)).rejects.toThrow('gone already');
  });
});
