import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

let t: TestApp;
beforeAll(async () => {
  // No workers: tasks stay open, so every hold is still held when the test looks.
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

const submit = (auth: Record<string, string>, body: unknown, url = '/v1/images/generations') =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe(`submit and billing [${backendName}]`, () => {
  it('wrong JSON types are a 400 naming the field (n: "2")', async () => {
    const account = await seedAccount(t.ctx, 1);
    for (const [body, field] of [
      [{ prompt: 'x', n: '2' }, 'n'],
      [{ prompt: 'x', output_compression: 5.5, output_format: 'jpeg' }, 'output_compression'],
      [{ prompt: 7 }, 'prompt'],
      [{ prompt: 'x', image_urls: 'https://a/b.png' }, 'image_urls'],
    ] as const) {
      const res = await submit(account.auth, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 400, type: 'invalid_request_error' });
      expect(res.json().error.message).toContain(field);
    }
    const video = await submit(account.auth, { model: 'vidgen-2.0', prompt: 'x', duration: '5' }, '/v1/videos/generations');
    expect(video.statusCode).toBe(400);
    expect(video.json().error.message).toContain('duration');
  });

  it('an unknown field is a 400 naming it, and nothing is held', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await submit(account.auth, { prompt: 'x', flavour: 'vanilla' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, type: 'invalid_request_error', message: expect.stringContaining('"flavour"') });
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ used: 0 });
  });

  it('an asset URL nobody owns is a 400 naming it', async () => {
    const account = await seedAccount(t.ctx, 5);
    const res = await submit(account.auth, { model: 'vidgen-2.0', image_urls: ['asset://as_nope'] }, '/v1/videos/generations');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('asset://as_nope');
  });

  it('holds the quote at submit: 402 payment_required when the account cannot pay', async () => {
    const account = await seedAccount(t.ctx, 0.01);
    const res = await submit(account.auth, { model: 'imggen-2', prompt: 'x', resolution: '4k' });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual({ error: { code: 402, type: 'payment_required', message: expect.any(String) } });
  });

  it('402 when a limited key cannot pay, even though the account can', async () => {
    const account = await seedAccount(t.ctx, 100, { quota: 0.01 });
    const res = await submit(account.auth, { model: 'imggen-2', prompt: 'x', resolution: '4k' });
    expect(res.statusCode).toBe(402);
    expect(res.json().error.message).toMatch(/key/i);
  });

  it('40 concurrent submits against an account funded for exactly 5 give 5 receipts and 35 x 402', async () => {
    const price = 0.08; // imggen-2 at 4k, from config/pricing.json
    const account = await seedAccount(t.ctx, price * 5);
    const results = await Promise.all(
      Array.from({ length: 40 }, () => submit(account.auth, { model: 'imggen-2', prompt: 'a lighthouse', resolution: '4k' })),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(5);
    expect(codes.filter((c) => c === 402)).toHaveLength(35);
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 0, used: 400_000 });
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  });

  it("GET /v1/tasks/{id}: an unknown id and another account's task are both 404 not_found_error", async () => {
    const owner = await seedAccount(t.ctx, 1);
    const other = await seedAccount(t.ctx, 1);
    const taskId = (await submit(owner.auth, { prompt: 'mine' })).json().data[0].task_id;
    const mine = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: owner.auth });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual({ code: 200, data: { id: taskId, status: 'submitted', progress: 0, created: expect.any(Number) } });
    for (const [url, auth] of [[`/v1/tasks/${taskId}`, other.auth], ['/v1/tasks/task_nope', owner.auth]] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ code: 404, type: 'not_found_error' });
    }
  });
});
