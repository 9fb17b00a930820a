import { randomBytes } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminHeaders, backendName, freshDatabase, type TestDatabase } from './harness.ts';
import { startFakeTaskUpstream, type FakeTaskUpstream } from './support/fake-task-upstream.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';
import { s3ServerForTests, type S3Server } from './support/s3-server.ts';

// Several machines: two real gateway processes on one database and one S3 bucket (a real S3-protocol
// server). The process that completes a task stores its file in S3; the other serves it, byte for
// byte. After the link's expiry it is a 404 on both, and the sweeper has deleted the object.

const s3 = await s3ServerForTests();
let database: TestDatabase;
let upstream: FakeTaskUpstream;
let worker: GatewayProcess;
let server: GatewayProcess;
const prefix = `gw-${randomBytes(3).toString('hex')}`;
const file = Buffer.concat([await sharp({ create: { width: 32, height: 32, channels: 3, background: '#aa3300' } }).png().toBuffer(), randomBytes(300_000)]);

beforeAll(async () => {
  if (!s3) return;
  database = await freshDatabase();
  upstream = await startFakeTaskUpstream({ bytes: file });
  const env = {
    ...database.env,
    ...s3.env(prefix),
    ADMIN_TOKEN,
    RELAY_POLL_MS: '50',
    JOB_POLL_MS: '20',
    RESULT_TTL_SECONDS: '4',
    FILES_SWEEP_MS: '200',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
  worker = await startGateway({ ...env, WORKERS: '4' });
  server = await startGateway({ ...env, WORKERS: '0' });
}, 90_000);
afterAll(async () => {
  await stopAllGateways();
  await upstream?.close();
  await s3?.stop();
  await database?.drop();
});

async function call(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

async function objects(): Promise<string[]> {
  const client = new S3Client({ region: 'us-east-1', endpoint: s3!.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  const listed = await client.send(new ListObjectsV2Command({ Bucket: s3!.bucket, Prefix: `${prefix}/` }));
  client.destroy();
  return (listed.Contents ?? []).map((o) => o.Key!);
}

describe.skipIf(!s3)(`two processes, FILES_STORE=s3://... [${backendName}]`, () => {
  it('a file stored by the process that completed the task is served by the other; after its expiry it is 404 and the object is gone', async () => {
    const channel = await call('POST', `${worker.url}/admin/channels`, adminHeaders, { name: 'up', type: 'relay', base_url: upstream.url, models: ['imggen-2'], priority: 10 });
    expect(channel.status).toBe(201);
    const user = await call('POST', `${worker.url}/admin/users`, adminHeaders, { name: 'caller', balance: 5 });
    const key = await call('POST', `${worker.url}/admin/keys`, adminHeaders, { user_id: user.body.id, unlimited: true });
    const auth = { authorization: `Bearer ${key.body.key}` };
    const submitted = await call('POST', `${server.url}/v1/images/generations`, auth, { model: 'imggen-2', prompt: 'shared', size: '1:1' });
    expect(submitted.status).toBe(200);
    const id = submitted.body.data[0].task_id;
    let task: any;
    for (let i = 0; i < 200 && !['completed', 'failed'].includes(task?.status); i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = (await call('GET', `${server.url}/v1/tasks/${id}`, auth)).body.data;
    }
    expect(task.status).toBe('completed');
    const link: string = task.result.images[0].url[0];
    // The worker signed it on its PUBLIC_BASE_URL; the other process answers the same path.
    expect(link.startsWith(`${worker.url}/files/`)).toBe(true);
    const other = link.replace(worker.url, server.url);
    const res = await request(other);
    expect([res.statusCode, res.headers['content-type'], Number(res.headers['content-length'])]).toEqual([200, 'image/png', file.length]);
    expect(Buffer.from(await res.body.arrayBuffer()).equals(file)).toBe(true);
    const stored = await objects();
    expect(stored.filter((k) => k.includes(id))).toHaveLength(1);

    // Past the expiry: refused on both processes, and the sweeper (any process's) deleted the object.
    const waitMs = task.result.images[0].expires_at * 1000 - Date.now() + 1200;
    await new Promise((r) => setTimeout(r, Math.max(0, waitMs)));
    for (const url of [link, other]) expect((await request(url)).statusCode).toBe(404);
    let left = await objects();
    for (let i = 0; i < 40 && left.some((k) => k.includes(id)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await objects();
    }
    expect(left.filter((k) => k.includes(id))).toEqual([]);
  }, 60_000);
});
