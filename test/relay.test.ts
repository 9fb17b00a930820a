import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, freshDatabase, seedAccount } from './harness.ts';
import { AVATAR_REVIEW_MODEL } from '../src/core/catalog/models.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { createDb } from '../src/db/index.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function json(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

describe(`relay channel [${backendName}]`, () => {
  it("gateway A relays to gateway B (both real processes): A's links are A's own, with B's bytes, and serve after B is stopped", async () => {
    const dbB = await freshDatabase();
    cleanups.push(() => dbB.drop());
    const b = await startGateway({ ...dbB.env, ADMIN_TOKEN, SIMULATOR_LATENCY_MS: '200', JOB_POLL_MS: '20', FILES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-b-')) });
    const userB = await json('POST', `${b.url}/admin/users`, adminHeaders, { name: 'gateway-a', balance: 10 });
    const keyB = await json('POST', `${b.url}/admin/keys`, adminHeaders, { user_id: userB.body.id, unlimited: true });
    expect(keyB.status).toBe(201);

    const a = await startGateway({
      ...(await freshDatabase().then((d) => (cleanups.push(() => d.drop()), d.env))),
      ADMIN_TOKEN,
      RELAY_POLL_MS: '100',
      JOB_POLL_MS: '20',
      FILES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-a-')),
    });
    const channel = await json('POST', `${a.url}/admin/channels`, adminHeaders, {
      name: 'gateway-b',
      type: 'relay',
      base_url: `${b.url}/`,
      secret: keyB.body.key,
      models: ['imggen-2'],
      model_mapping: { 'imggen-2': 'imggen-2-ext' },
      priority: 10,
    });
    expect(channel.status).toBe(201);
    expect(channel.body).toMatchObject({ type: 'relay', has_secret: true, base_url: b.url });
    expect(JSON.stringify(channel.body)).not.toContain(keyB.body.key);

    const userA = await json('POST', `${a.url}/admin/users`, adminHeaders, { name: 'caller', balance: 5 });
    const keyA = await json('POST', `${a.url}/admin/keys`, adminHeaders, { user_id: userA.body.id, unlimited: true });
    const auth = { authorization: `Bearer ${keyA.body.key}` };
    const submitted = await json('POST', `${a.url}/v1/images/generations`, auth, { model: 'imggen-2', prompt: 'relayed lighthouse', size: '4:3' });
    expect(submitted.status).toBe(200);
    const taskId = submitted.body.data[0].task_id;

    let record: any;
    for (let i = 0; i < 150; i++) {
      record = (await json('GET', `${a.url}/v1/tasks/${taskId}`, auth)).body.data;
      if (record.status === 'completed' || record.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(record.status).toBe('completed');
    // A re-hosted B's file: the link names A, and the bytes are B's.
    const link: string = record.result.images[0].url[0];
    expect(link.startsWith(`${a.url}/files/`)).toBe(true);
    const bytes = Buffer.from(await (await request(link)).body.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 768]);
    const bStore = createDb(dbB.url, { schema: dbB.schema });
    const bTasks = await bStore.db.selectFrom('tasks').select('result').execute();
    await bStore.close();
    expect(bTasks).toHaveLength(1);
    const bLink: string = JSON.parse(bTasks[0]!.result!).images[0].url[0];
    expect(bLink.startsWith(`${b.url}/files/`)).toBe(true);
    expect(Buffer.from(await (await request(bLink)).body.arrayBuffer()).equals(bytes)).toBe(true);

    // B ran the task for A's account there, under the mapped model name.
    const bBalance = await json('GET', `${b.url}/v1/user/balance`, { authorization: `Bearer ${keyB.body.key}` });
    expect(bBalance.body.used_balance).toBeCloseTo(0.02);

    // With B gone, A still serves the file, byte for byte.
    await b.stop();
    const after = await request(link);
    expect([after.statusCode, after.headers['content-type']]).toEqual([200, 'image/png']);
    expect(Buffer.from(await after.body.arrayBuffer()).equals(bytes)).toBe(true);
  }, 90_000);

  it('a relay channel needs a base_url; secrets never appear in listings', async () => {
    const t = await createTestApp();
    try {
      const bad = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'x', type: 'relay', models: ['imggen-2'] } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toContain('base_url');
      const unknownType = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'x', type: 'ftp', models: [] } });
      expect(unknownType.statusCode).toBe(400);
      await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'x', type: 'relay', base_url: 'http://127.0.0.1:9', secret: 'sk-secret-upstream', models: ['imggen-2'] } });
      const list = await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders });
      expect(list.json().data.map((c: any) => c.type).sort()).toEqual(['relay', 'simulator']);
      expect(list.body).not.toContain('sk-secret-upstream');
    } finally {
      await t.close();
    }
  });

  it('avatar review is not relayed: such a channel is a 400, and a relay serving `*` (or stored with the model) is passed over for it', async () => {
    const t = await createTestApp({ SIMULATOR_LATENCY_MS: '50' }, undefined, { workers: true });
    try {
      const channel = (payload: Record<string, unknown>, method: 'POST' | 'PATCH' = 'POST', id = '') =>
        t.app.inject({ method, url: `/admin/channels${id}`, headers: adminHeaders, payload });
      const refused = await channel({ name: 'r', type: 'relay', base_url: 'http://127.0.0.1:9', models: ['imggen-2', AVATAR_REVIEW_MODEL] });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error.message).toBe(`models: a relay channel serves only text, image, video models, not ${AVATAR_REVIEW_MODEL} (avatar)`);
      const everything = await channel({ name: 'r', type: 'relay', base_url: 'http://127.0.0.1:9', models: ['*'], priority: 10 });
      expect(everything.statusCode).toBe(201);
      expect((await channel({ models: [AVATAR_REVIEW_MODEL] }, 'PATCH', `/${everything.json().id}`)).statusCode).toBe(400);
      const types = (await t.app.inject({ method: 'GET', url: '/admin/channel-types', headers: adminHeaders })).json().data;
      expect(types.find((e: any) => e.type === 'relay').serves).toEqual(['text', 'image', 'video']);

      const account = await seedAccount(t.ctx, 5);
      const review = async () => {
        const submitted = await t.app.inject({ method: 'POST', url: '/v1/seedance2/private-avatar', headers: account.auth, payload: { group: { name: 'g' }, url: 'https://cdn.example.com/a.png', name: 'a' } });
        expect(submitted.statusCode).toBe(200);
        for (let i = 0; i < 200; i++) {
          const task = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${submitted.json().data.id}`, headers: account.auth })).json().data;
          if (task.status === 'completed' || task.status === 'failed') return task;
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error('the review did not end');
      };
      expect((await review()).status).toBe('completed');
      // A channel stored while relay still claimed avatars: routing passes over it all the same.
      await t.ctx.db.updateTable('channels').set({ models: JSON.stringify([AVATAR_REVIEW_MODEL]) }).where('id', '=', everything.json().id).execute();
      t.ctx.channels.invalidate();
      expect((await review()).status).toBe('completed');
      const relay = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'relay');
      expect(relay.health.consecutive_failures).toBe(0);
    } finally {
      await t.close();
    }
  });
});
