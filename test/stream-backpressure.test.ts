import fs from 'node:fs';
import net from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeEndlessText, type FakeEndlessText } from './support/fake-endless-text.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';

// Stream callers that never read, against upstreams with hundreds of MiB to say, on a gateway in a
// process of its own (its RSS is read from /proc): the upstream is read only as fast as the caller
// reads, so what the gateway holds per stream stays small and the event loop stays free; a caller
// stalled past STREAM_STALL_SECONDS is cut off and its upstream call with it. Every text surface
// that streams, on the same-format path (bytes forwarded) and on translated ones.

const MiB = 1024 * 1024;
const PER_STREAM = 64 * MiB;
const CALLERS_PER_SURFACE = 2;
const STALL_SECONDS = 15;

let t: TestApp;
let upstream: FakeEndlessText;
let gateway: GatewayProcess;
let key: string;

beforeAll(async () => {
  t = await createTestApp();
  upstream = await startFakeEndlessText(PER_STREAM);
  const channels = [
    { name: 'messages', type: 'messages', models: ['chatgen-4-haiku'] },
    { name: 'chat', type: 'chat-completions', models: ['chatgen-4-sonnet'] },
    { name: 'native', type: 'native', models: ['textgen-2.5-pro'] },
    { name: 'gemini', type: 'gemini', models: ['textgen-2.5-flash'] },
  ];
  for (const channel of channels) {
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { ...channel, base_url: upstream.url, secret: 'sk-up' } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const text = new Set(channels.flatMap((c) => c.models));
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !text.has(m)) } });
  key = (await seedAccount(t.ctx, 1_000_000)).key;
  gateway = await startGateway({ ...t.database.env, ADMIN_TOKEN, WORKERS: '0', RATE_LIMIT_RPM: '100000', STREAM_STALL_SECONDS: String(STALL_SECONDS), LOG_LEVEL: 'info' });
  // The fixture works end to end: each surface streams a short answer whole to a caller that reads.
  upstream.limit = 256 * 1024;
  for (const [name, path, body] of SURFACES) {
    const res = await request(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.body.text();
    expect(res.statusCode, `${name}: ${text.slice(0, 300)}`).toBe(200);
    expect(text.length, name).toBeGreaterThan(200 * 1024);
  }
  expect(upstream.finished).toBe(SURFACES.length);
  upstream.limit = PER_STREAM;
}, 90_000);
afterAll(async () => {
  await stopAllGateways();
  await upstream?.close();
  await t?.close();
});

const talk = { contents: [{ role: 'user', parts: [{ text: 'talk' }] }] };
const chat = (model: string) => ({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'talk' }] });
/** Every streaming surface, and the upstream behind it. */
const SURFACES: [string, string, object][] = [
  ['messages, same format (bytes forwarded)', '/v1/messages', chat('chatgen-4-haiku')],
  ['messages from a chat-completions upstream', '/v1/messages', chat('chatgen-4-sonnet')],
  ['chat-completions', '/v1/chat/completions', chat('chatgen-4-sonnet')],
  ['chat-completions from a messages upstream', '/v1/chat/completions', chat('chatgen-4-haiku')],
  ['Gemini API surface from a native upstream', '/gemini/v1beta/models/textgen-2.5-pro:streamGenerateContent?alt=sse', talk],
  ['wrapped native surface from a Gemini API upstream', '/v1beta/models/textgen-2.5-flash:streamGenerateContent?alt=sse', talk],
];

/** A caller that sends its request and never reads a byte of the answer. */
function stalledCaller(path: string, body: object): net.Socket {
  const payload = JSON.stringify(body);
  const socket = net.connect(gateway.port, '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  );
  return socket;
}

function rssOf(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

async function healthzMs(): Promise<number> {
  const started = performance.now();
  const res = await request(`${gateway.url}/healthz`);
  await res.body.dump();
  expect(res.statusCode).toBe(200);
  return performance.now() - started;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether the upstreams, once `started` answers are under way, stop delivering for a second and a half within `withinMs`. */
async function deliveryStops(started: number, withinMs: number): Promise<boolean> {
  let last = -1;
  let stillFor = 0;
  for (const begun = Date.now(); Date.now() - begun < withinMs; ) {
    await pause(100);
    stillFor = upstream.written === last && upstream.started === started ? stillFor + 100 : 0;
    if (stillFor >= 1500) return true;
    last = upstream.written;
  }
  return false;
}

describe(`streams to callers that never read [${backendName}]`, () => {
  it('a caller that stops reading holds its upstream back; when it reads on, it gets the whole answer, ended as its format ends', async () => {
    // More than the sockets on the way hold, so the gateway waits for the caller more than once.
    upstream.limit = 16 * MiB;
    const ends = ['event: message_stop', 'event: message_stop', 'data: [DONE]', 'data: [DONE]', '"finishReason":"STOP"', '"finishReason":"STOP"'];
    const before = { finished: upstream.finished, started: upstream.started };
    const answers = await Promise.all(
      SURFACES.map(([, path, body]) => request(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })),
    );
    expect(await deliveryStops(before.started + SURFACES.length, 10_000)).toBe(true);
    expect(upstream.finished - before.finished).toBe(0);
    await Promise.all(
      answers.map(async (res, i) => {
        const name = SURFACES[i]![0];
        const text = await res.body.text();
        expect(res.statusCode, name).toBe(200);
        expect(text.length, name).toBeGreaterThan(15 * MiB);
        expect(text.trimEnd().split('\n\n').at(-1), name).toContain(ends[i]);
      }),
    );
    expect(upstream.finished - before.finished).toBe(SURFACES.length);
    upstream.limit = PER_STREAM;
  }, 60_000);

  it('pause the upstream read, hold little memory, keep /healthz quick; a stall past STREAM_STALL_SECONDS ends the stream and its upstream call', async () => {
    const before = { written: upstream.written, started: upstream.started, cancelled: upstream.cancelled, finished: upstream.finished };
    const callers = SURFACES.flatMap(([, path, body]) => Array.from({ length: CALLERS_PER_SURFACE }, () => stalledCaller(path, body)));
    const wouldWrite = callers.length * PER_STREAM;
    const rssBefore = rssOf(gateway.child.pid!);
    let rssPeak = rssBefore;
    // Until the upstreams stop delivering (at most until shortly before the stall limit).
    const sampling = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(gateway.child.pid!))), 100);
    const stopped = await deliveryStops(before.started + callers.length, (STALL_SECONDS - 6) * 1000).finally(() => clearInterval(sampling));
    // The callers still hold their streams open: the gateway answers others as if they were not there.
    let slowest = 0;
    for (let probe = 0; probe < 10; probe++) {
      slowest = Math.max(slowest, await healthzMs());
      rssPeak = Math.max(rssPeak, rssOf(gateway.child.pid!));
      await pause(100);
    }
    const delivered = upstream.written - before.written;
    const report = `${(delivered / MiB).toFixed(0)} MiB delivered of ${wouldWrite / MiB}, ${upstream.finished - before.finished} answers whole`;
    expect(upstream.started - before.started).toBe(callers.length);
    // The upstreams stopped, mid-answer: what the sockets on the way hold (the kernel's buffers on both
    // sides of the gateway, a few MiB each here) and a bounded buffer in the gateway is all a paused stream takes.
    expect(stopped, report).toBe(true);
    expect(upstream.finished - before.finished, report).toBe(0);
    expect(delivered, report).toBeLessThan(wouldWrite / 4);
    expect(rssPeak - rssBefore, `RSS grew ${((rssPeak - rssBefore) / MiB).toFixed(0)} MiB`).toBeLessThan(150 * MiB);
    expect(slowest, `slowest /healthz during the stall ${slowest.toFixed(0)} ms`).toBeLessThan(1000);

    // A caller that hangs up while the gateway waits for it stops its upstream call at once, and its
    // stream ends (logged as a caller that left): nothing of it waits for the stall limit.
    const leftBefore = gateway.output().split('closed the connection before the answer').length;
    const left = () => gateway.output().split('closed the connection before the answer').length - leftBefore;
    const leaving = callers.slice(0, CALLERS_PER_SURFACE);
    for (const socket of leaving) socket.destroy();
    const hungUp = Date.now() + 3000;
    while ((upstream.cancelled - before.cancelled < leaving.length || left() < leaving.length) && Date.now() < hungUp) await pause(50);
    expect(upstream.cancelled - before.cancelled).toBe(leaving.length);
    expect(left()).toBe(leaving.length);

    // Nobody reads: past the stall limit every stream is ended and its upstream call aborted.
    const deadline = Date.now() + (STALL_SECONDS + 15) * 1000;
    while (upstream.cancelled - before.cancelled < callers.length && Date.now() < deadline) await pause(200);
    expect(upstream.cancelled - before.cancelled).toBe(callers.length);
    // Cut off as stalled (the log says why), not by some other limit.
    const stalledLine = `read nothing of the stream for ${STALL_SECONDS} s`;
    const logged = () => gateway.output().split(stalledLine).length - 1;
    while (logged() < callers.length - leaving.length && Date.now() < deadline + 5000) await pause(200);
    expect(logged()).toBe(callers.length - leaving.length);
    for (const socket of callers) socket.destroy();
  }, 90_000);
});
