import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';

// A result link is `<payload>.<signature>.<ext>`. The payload names the stored key, whose extension
// picks the Content-Type, so the link's extension must agree with it: a renamed link is refused like
// any other unsigned link, and nothing is rendered or stored for it.

let t: TestApp;
let base: string;
const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-signed-links-'));
beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ SIMULATOR_LATENCY_MS: '50', PUBLIC_BASE_URL: base, FILES_DIR: filesDir }, undefined, { workers: true });
  await t.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(filesDir, { recursive: true, force: true });
});

async function completedImageLink(body: Record<string, unknown>): Promise<string> {
  const account = await seedAccount(t.ctx, 5);
  const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: body });
  expect(submit.statusCode).toBe(200);
  const taskId = submit.json().data[0].task_id;
  for (let i = 0; i < 400; i++) {
    const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: account.auth })).json().data;
    if (task.status === 'completed') return task.result.images[0].url[0];
    expect(task.status).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('task did not end');
}

async function fetchLink(url: string, method: 'GET' | 'HEAD' = 'GET', headers: Record<string, string> = {}) {
  const res = await request(url, { method, headers });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, bytes };
}

const renamed = (url: string, ext: string) => url.replace(/\.[a-z0-9]+$/, `.${ext}`);
const cached = () => fs.readdirSync(filesDir, { recursive: true, encoding: 'utf8' }).sort();
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe(`signed result links [${backendName}]`, () => {
  it('a completed PNG result link serves PNG bytes with GET, HEAD and Range', async () => {
    const url = await completedImageLink({ model: 'imggen-2', prompt: 'a lighthouse', size: '1:1', resolution: '1k' });
    expect(url).toMatch(/\.png$/);
    const full = await fetchLink(url);
    expect([full.status, full.headers['content-type']]).toEqual([200, 'image/png']);
    expect(full.bytes.subarray(0, 4)).toEqual(PNG_MAGIC);
    expect(Number(full.headers['content-length'])).toBe(full.bytes.length);

    const head = await fetchLink(url, 'HEAD');
    expect([head.status, head.headers['content-type'], Number(head.headers['content-length'])]).toEqual([200, 'image/png', full.bytes.length]);
    expect(head.bytes.length).toBe(0);

    const part = await fetchLink(url, 'GET', { range: 'bytes=0-7' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-7/${full.bytes.length}`);
    expect(part.bytes).toEqual(full.bytes.subarray(0, 8));
    const tail = await fetchLink(url, 'GET', { range: 'bytes=-5' });
    expect([tail.status, tail.headers['content-range']]).toEqual([206, `bytes ${full.bytes.length - 5}-${full.bytes.length - 1}/${full.bytes.length}`]);
    expect(tail.bytes).toEqual(full.bytes.subarray(-5));
    const rest = await fetchLink(url, 'GET', { range: 'bytes=8-' });
    expect([rest.status, rest.bytes]).toEqual([206, full.bytes.subarray(8)]);
    // Several spans are answered with the whole file; a span past the end is 416 naming the size.
    const whole = await fetchLink(url, 'GET', { range: 'bytes=0-1,4-5' });
    expect([whole.status, whole.bytes.length]).toEqual([200, full.bytes.length]);
    const past = await fetchLink(url, 'GET', { range: `bytes=${full.bytes.length}-` });
    expect([past.status, past.headers['content-range']]).toEqual([416, `bytes */${full.bytes.length}`]);
    // The stored bytes never change under a link: an ETag, revalidation, and caching up to the expiry.
    expect(full.headers.etag).toMatch(/^"[^"]+"$/);
    const maxAge = Number(/max-age=(\d+)/.exec(String(full.headers['cache-control']))?.[1]);
    expect(maxAge).toBeGreaterThan(23 * 3600);
    expect(maxAge).toBeLessThanOrEqual(24 * 3600);
    const revalidated = await fetchLink(url, 'GET', { 'if-none-match': String(full.headers.etag) });
    expect([revalidated.status, revalidated.bytes.length]).toEqual([304, 0]);
  });

  it('the same link renamed to .jpg, .webp or .mp4 is a 404, and nothing is rendered or cached for it', async () => {
    const url = await completedImageLink({ model: 'imggen-2', prompt: 'a harbour', size: '1:1', resolution: '1k' });
    expect((await fetchLink(url)).status).toBe(200);
    const before = cached();
    for (const ext of ['jpg', 'webp', 'mp4']) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await fetchLink(renamed(url, ext), method);
        expect([ext, method, res.status]).toEqual([ext, method, 404]);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        if (method === 'GET') expect(JSON.parse(res.bytes.toString()).error.type).toBe('not_found_error');
      }
    }
    expect(cached()).toEqual(before);
    // The original link is untouched by the attempts.
    const again = await fetchLink(url);
    expect([again.status, again.headers['content-type']]).toEqual([200, 'image/png']);
  });

  it('a JPEG result link works as issued and is refused renamed to .png; a video link renamed to .png is refused', async () => {
    const url = await completedImageLink({ model: 'imggen-2-official', prompt: 'x', size: '3:2', resolution: '1k', output_format: 'jpeg' });
    expect(url).toMatch(/\.jpg$/);
    const jpeg = await fetchLink(url);
    expect([jpeg.status, jpeg.headers['content-type']]).toEqual([200, 'image/jpeg']);
    expect(jpeg.bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const before = cached();
    expect((await fetchLink(renamed(url, 'png'))).status).toBe(404);
    const video = t.ctx.files.signer.url({ spec: { k: 'video', w: 64, h: 64, d: 1, s: 'renamed' }, expiresAt: Math.floor(Date.now() / 1000) + 60 });
    expect(video).toMatch(/\.mp4$/);
    expect((await fetchLink(renamed(video, 'png'))).status).toBe(404);
    expect(cached()).toEqual(before);
  });
});
