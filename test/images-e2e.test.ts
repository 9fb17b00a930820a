import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { request } from 'undici';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ SIMULATOR_LATENCY_MS: '300' }, undefined, { workers: true });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  // Result links must point at this server.
  (t.ctx.files.signer as any).baseUrl = base;
});
afterAll(() => t.close());

async function call(method: 'GET' | 'POST', path: string, auth: Record<string, string>, body?: unknown) {
  const res = await request(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.statusCode, json: (await res.body.json()) as any };
}

async function pollUntilDone(taskId: string, auth: Record<string, string>) {
  const seen: number[] = [];
  for (let i = 0; i < 200; i++) {
    const { json } = await call('GET', `/v1/tasks/${taskId}`, auth);
    seen.push(json.data.progress);
    if (json.data.status === 'completed' || json.data.status === 'failed') return { record: json.data, seen };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('task did not end');
}

describe(`image tasks end to end [${backendName}]`, () => {
  it('submit, poll to completed, download a PNG of the exact size', async () => {
    const account = await seedAccount(t.ctx, 5);
    const submit = await call('POST', '/v1/images/generations', account.auth, { model: 'imggen-2', prompt: 'a red fox', size: '16:9', resolution: '2k', n: 2 });
    expect(submit.status).toBe(200);
    expect(submit.json).toEqual({ code: 200, data: [{ status: 'submitted', task_id: expect.stringMatching(/^task_/) }] });
    const { record } = await pollUntilDone(submit.json.data[0].task_id, account.auth);
    expect(record.status).toBe('completed');
    expect(record.progress).toBe(100);
    expect(record.result.images[0].url).toHaveLength(2);
    const file = await request(record.result.images[0].url[0]);
    expect(file.statusCode).toBe(200);
    const meta = await sharp(Buffer.from(await file.body.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 2048, 1152]);
    expect(record.cost).toBeCloseTo(0.08);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it('[sim:fail] ends failed with error.message and error.code, and the balance is back', async () => {
    const account = await seedAccount(t.ctx, 1);
    const before = (await call('GET', '/v1/user/balance', account.auth)).json;
    const submit = await call('POST', '/v1/images/generations', account.auth, { prompt: 'nope [sim:fail=content_policy_violation]' });
    const { record } = await pollUntilDone(submit.json.data[0].task_id, account.auth);
    expect(record.status).toBe('failed');
    expect(record.error).toEqual({ code: 'content_policy_violation', message: expect.any(String) });
    expect((await call('GET', '/v1/user/balance', account.auth)).json).toEqual(before);
  });
});
