import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextUpstreamUnavailable } from '../src/core/text/provider.ts';
import { sseData } from '../src/providers/upstream-http.ts';
import { MessagesEvents } from '../src/providers/messages/messages.events.ts';
import { maxAnswerBytes, readBounded, setMaxAnswerBytes, UpstreamAnswerCut } from '../src/providers/upstream-read.ts';
import { UpstreamRejected } from '../src/core/task-provider.ts';

// The one reader of whole upstream answers, against a real local server: an answer over the cap
// and one that trickles under the connection's idle timeouts are both cut off, their connection closed.

let server: http.Server;
let base: string;
let closedEarly = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/small') return res.end('{"ok":true}');
    // /big writes 64 KiB every few ms without end; /trickle a byte every 20 ms.
    const [size, every] = req.url === '/big' ? [64 * 1024, 2] : [1, 20];
    const timer = setInterval(() => res.write('x'.repeat(size)), every);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function waitFor(check: () => boolean) {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('readBounded', () => {
  it('reads an answer within its limits whole', async () => {
    const res = await request(`${base}/small`);
    expect((await readBounded(res.body, { maxBytes: 1024, deadlineMs: 5000 })).toString()).toBe('{"ok":true}');
  });

  it('cuts off an answer over maxBytes with a task-ending upstream error, and closes its connection', async () => {
    const before = closedEarly;
    const res = await request(`${base}/big`);
    const err = await readBounded(res.body, { maxBytes: 1024 * 1024, deadlineMs: 30_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerCut);
    expect(err).toBeInstanceOf(UpstreamRejected);
    expect([err.reason, err.code]).toEqual(['too_large', 'upstream_error']);
    await waitFor(() => closedEarly > before);
    expect(closedEarly).toBe(before + 1);
  });

  it('cuts off an answer that trickles past its total deadline (each byte inside the idle timeout), and closes its connection', async () => {
    const before = closedEarly;
    const res = await request(`${base}/trickle`, { bodyTimeout: 1000 });
    const err = await readBounded(res.body, { maxBytes: 1024 * 1024, deadlineMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerCut);
    expect(err.reason).toBe('too_slow');
    await waitFor(() => closedEarly > before);
    expect(closedEarly).toBe(before + 1);
  });

  it('takes any async iterable of chunks (a body without destroy is stopped through its iterator)', async () => {
    let stopped = false;
    async function* endless() {
      try {
        for (;;) yield Buffer.alloc(1024);
      } finally {
        stopped = true;
      }
    }
    await expect(readBounded(endless(), { maxBytes: 10 * 1024, deadlineMs: 5000 })).rejects.toMatchObject({ reason: 'too_large' });
    await waitFor(() => stopped);
    expect(stopped).toBe(true);
  });

  it("a stream's event that never ends is cut off at the process's cap (sseData), and the body is stopped", async () => {
    const cap = maxAnswerBytes();
    setMaxAnswerBytes(1024 * 1024);
    let sent = 0;
    let stopped = false;
    async function* endlessEvent() {
      try {
        yield Buffer.from('data: {"ok":true}\n\ndata: "');
        // 20 MiB of one event (a reader without a cap holds it all, then ends), then its end.
        for (; sent < 20 * 1024 * 1024; sent += 64 * 1024) yield Buffer.alloc(64 * 1024, 'x');
        yield Buffer.from('"\n\n');
      } finally {
        stopped = true;
      }
    }
    try {
      const seen: string[] = [];
      const err = await (async () => {
        for await (const data of sseData(endlessEvent())) seen.push(data.slice(0, 20));
      })().catch((e) => e);
      expect(seen).toEqual(['{"ok":true}']);
      expect(err).toBeInstanceOf(TextUpstreamUnavailable);
      expect(err.message).toMatch(/over 1048576 bytes/);
      expect(sent).toBeLessThan(2 * 1024 * 1024);
      expect(stopped).toBe(true);
    } finally {
      setMaxAnswerBytes(cap);
    }
  });

  it('a same-format messages stream forwards the same bytes and reads the same usage however its reads are cut', () => {
    const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const stream = Buffer.from(
      event('message_start', { type: 'message_start', message: { id: 'up', model: 'theirs', usage: { input_tokens: 7, output_tokens: 1 } } }) +
        event('ping', { type: 'ping' }) +
        event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo\n\nworld' } }) +
        event('message_delta', { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 9 } }) +
        event('message_stop', { type: 'message_stop' }),
    );
    const run = (cuts: number[]) => {
      const events = new MessagesEvents({ id: 'msg_1', model: 'mine' });
      const parts: Buffer[] = [];
      let at = 0;
      for (const cut of [...cuts, stream.length]) {
        parts.push(...(events.take(stream.subarray(at, cut)) ?? []));
        at = cut;
      }
      parts.push(...(events.rest() ?? []));
      return { bytes: Buffer.concat(parts).toString('utf8'), reported: events.reported, finish: events.finish };
    };
    const whole = run([]);
    expect(whole.bytes).toContain('"id":"msg_1","model":"mine"');
    expect(whole.reported).toMatchObject({ input: 7, output: 9 });
    expect(whole.finish).toBe('max_tokens');
    for (let a = 1; a < stream.length; a++) {
      expect(run([a]), `cut at ${a}`).toEqual(whole);
      for (let b = a + 1; b < stream.length; b += 7) expect(run([a, b]), `cuts at ${a}, ${b}`).toEqual(whole);
    }
  });

  it("a same-format messages stream's event that never ends is cut off at the cap, not held without bound", () => {
    const cap = maxAnswerBytes();
    setMaxAnswerBytes(1024 * 1024);
    try {
      const events = new MessagesEvents({ id: 'msg_1', model: 'm' });
      expect(events.take(Buffer.from('event: ping\ndata: {"type":"ping"}\n\n'))).toHaveLength(1);
      const piece = Buffer.from('x'.repeat(64 * 1024));
      let err: unknown;
      let taken = 0;
      for (; taken < 64 && !err; taken++) {
        try {
          events.take(piece);
        } catch (e) {
          err = e;
        }
      }
      expect(err).toBeInstanceOf(TextUpstreamUnavailable);
      expect(taken).toBeLessThanOrEqual(17);
    } finally {
      setMaxAnswerBytes(cap);
    }
  });
});
