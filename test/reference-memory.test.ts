import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { expectedDigest, startDigestingOpenAI, startImageHost } from './support/reference-hosts.ts';

// Callers' reference images are downloaded by the worker and sent to the upstream. Many tasks with
// many large references at once must not hold them all in memory: the process has one memory budget
// (REFERENCE_MEMORY_MB) and what does not fit waits on disk, sent from there.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const TASKS = 6;
const REFS = 6;
const MEGABYTES = 16;

/** Peak resident memory of a process so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`reference images under one memory budget [${backendName}]`, () => {
  it(`${TASKS} tasks with ${REFS} references of ${MEGABYTES} MB each: the worker's peak RSS grows far less than the bytes, the upstream gets every byte, no spool file is left`, async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer();
    const upstream = await startDigestingOpenAI(png);
    const images = await startImageHost();
    const database = await freshDatabase();
    const api: TestApp = await createTestApp({ WORKERS: '0', FETCH_ALLOW_PRIVATE: 'true' }, database);
    const spool = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-spool-'));
    const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-files-'));
    cleanups.push(upstream.close, images.close, () => database.drop(), () => api.close(), async () => fs.rmSync(spool, { recursive: true, force: true }), async () => fs.rmSync(filesDir, { recursive: true, force: true }));

    for (const channel of await api.ctx.db.selectFrom('channels').select('id').execute()) {
      await api.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
    }
    const created = await api.app.inject({
      method: 'POST', url: '/admin/channels', headers: adminHeaders,
      payload: { name: 'openai', type: 'openai', base_url: upstream.url, secret: 'sk-test', models: ['imggen-2-official'] },
    });
    expect(created.statusCode).toBe(201);

    const worker = await startGateway(
      { ...database.env, WORKERS: '8', JOB_POLL_MS: '20', FETCH_ALLOW_PRIVATE: 'true', FILES_DIR: filesDir, REFERENCE_MEMORY_MB: '16', REFERENCE_SPOOL_DIR: spool },
      'src/cli.ts',
      ['worker'],
    );
    const account = await seedAccount(api.ctx, 100);
    const submit = async (payload: Record<string, unknown>) => {
      const res = await api.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2-official', prompt: 'p', ...payload } });
      expect(res.statusCode).toBe(200);
      return res.json().data[0].task_id as string;
    };
    const ended = (ids: string[]) =>
      waitFor('the tasks to end', async () => {
        const rows = await api.ctx.db.selectFrom('tasks').select(['id', 'status', 'error_message']).where('id', 'in', ids).execute();
        return rows.every((r) => r.status === 'completed' || r.status === 'failed') ? rows : undefined;
      });

    // A first task warms the worker up (modules, connections): the baseline is taken after it.
    expect((await ended([await submit({})]))[0]!.status).toBe('completed');
    const before = peakRss(worker.child.pid!);

    const names = Array.from({ length: TASKS }, (_, t) => Array.from({ length: REFS }, (_, r) => `t${t}-r${r}`));
    const ids = await Promise.all(names.map((refs) => submit({ image_urls: refs.map((name) => `${images.url}/${name}?mb=${MEGABYTES}`) })));
    const rows = await ended(ids);
    expect(rows.map((r) => [r.status, r.error_message])).toEqual(ids.map(() => ['completed', null]));
    const grown = peakRss(worker.child.pid!) - before;

    // Every reference reached the upstream whole, in order.
    expect(upstream.edits).toHaveLength(TASKS);
    const received = upstream.edits.map((parts) => parts.filter((p) => p.field === 'image[]').map((p) => ({ size: p.size, sha256: p.sha256 })));
    const wanted = names.map((refs) => refs.map((name) => expectedDigest(name, MEGABYTES)));
    expect(new Set(received.map((r) => JSON.stringify(r)))).toEqual(new Set(wanted.map((w) => JSON.stringify(w))));

    // All of them together are 576 MB; held in memory they raised the peak by more than that.
    const total = TASKS * REFS * MEGABYTES * 1024 * 1024;
    expect(grown).toBeLessThan(200 * 1024 * 1024);
    expect(grown).toBeLessThan(total / 2);
    expect(filesUnder(spool)).toEqual([]);
  }, 240_000);
});
