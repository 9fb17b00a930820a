import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { startDigestingOpenAI, startTrickleHost } from './support/reference-hosts.ts';

// A caller's reference host that sends a byte a second must not stall the worker: its downloads take
// at most their share of the worker slots (another account's task runs meanwhile), and the task's
// deadline ends the download itself, not only the bill.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const DEADLINE_S = 6;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`trickling references [${backendName}]`, () => {
  it('sixteen submits whose reference trickles: another account\'s task still completes at once, and the deadline closes the downloads and refunds them', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer();
    const upstream = await startDigestingOpenAI(png);
    const trickle = await startTrickleHost(1000);
    const database = await freshDatabase();
    const api: TestApp = await createTestApp({ WORKERS: '0', FETCH_ALLOW_PRIVATE: 'true', TASK_DEADLINE_IMAGE_S: String(DEADLINE_S) }, database);
    const spool = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-spool-'));
    const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-files-'));
    cleanups.push(upstream.close, trickle.close, () => database.drop(), () => api.close(), async () => fs.rmSync(spool, { recursive: true, force: true }), async () => fs.rmSync(filesDir, { recursive: true, force: true }));

    for (const channel of await api.ctx.db.selectFrom('channels').select('id').execute()) {
      await api.app.inject({ method: 'PATCH', url: `/admin/channels/${channel.id}`, headers: adminHeaders, payload: { status: 'disabled' } });
    }
    const created = await api.app.inject({
      method: 'POST', url: '/admin/channels', headers: adminHeaders,
      payload: { name: 'openai', type: 'openai', base_url: upstream.url, secret: 'sk-test', models: ['imggen-2-official'] },
    });
    expect(created.statusCode).toBe(201);
    // The download's own deadline and rate rule are far off here: what ends these downloads is the task's deadline.
    await startGateway(
      {
        ...database.env, WORKERS: '16', JOB_POLL_MS: '20', FETCH_ALLOW_PRIVATE: 'true', FILES_DIR: filesDir, REFERENCE_SPOOL_DIR: spool,
        TASK_DEADLINE_IMAGE_S: String(DEADLINE_S), REFERENCE_TIMEOUT_MS: '600000', REFERENCE_RATE_WINDOW_MS: '600000',
      },
      'src/cli.ts',
      ['worker'],
    );
    const slow = await seedAccount(api.ctx, 100);
    const other = await seedAccount(api.ctx, 100);
    const submit = async (account: typeof slow, payload: Record<string, unknown> = {}) => {
      const res = await api.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2-official', prompt: 'p', ...payload } });
      expect(res.statusCode).toBe(200);
      return res.json().data[0].task_id as string;
    };
    const task = (id: string) => api.ctx.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const ended = (id: string) => waitFor(`task ${id} to end`, async () => {
      const row = await task(id);
      return row.status === 'completed' || row.status === 'failed' ? row : undefined;
    });

    // The worker is up once a task completed (the first may time out while the process starts).
    await waitFor('the worker to start', async () => ((await ended(await submit(other))).status === 'completed' ? true : undefined));

    const submittedAt = Date.now();
    const slowIds = await Promise.all(Array.from({ length: 16 }, (_, i) => submit(slow, { image_urls: [`${trickle.url}/ref-${i}.png`] })));
    await waitFor('the trickling downloads to start', () => (trickle.connections.length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));

    const startedAt = Date.now();
    const quick = await ended(await submit(other));
    expect(quick.status).toBe('completed');
    // Well within its own deadline: it did not wait for a slot the trickles held.
    expect(Date.now() - startedAt).toBeLessThan((DEADLINE_S * 1000) / 2);

    // Each trickling task ends at its deadline, refunded, and its download is closed then.
    const slowRows = await Promise.all(slowIds.map(ended));
    expect(slowRows.map((r) => [r.status, r.error_code])).toEqual(slowIds.map(() => ['failed', 'timeout']));
    expect((await api.app.inject({ method: 'GET', url: '/v1/user/balance', headers: slow.auth })).json().used_balance).toBe(0);
    await waitFor('the trickling connections to close', () => (trickle.connections.every((c) => c.closedAt !== undefined) ? true : undefined), 15_000);
    for (const connection of trickle.connections) expect(connection.closedAt! - submittedAt).toBeLessThan((DEADLINE_S + 5) * 1000);
    expect(upstream.edits).toHaveLength(0);
  }, 120_000);
});
