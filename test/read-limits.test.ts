import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Reads that spend nothing (balance, task status, the model list) are limited apart from the calls
// that spend: a client polling its open tasks neither runs out of reads nor uses up its paid calls.

let t: TestApp;
let roomy: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_RPM: '3', READ_RATE_LIMIT_RPM: '40' });
  roomy = await createTestApp(); // the defaults: 600 calls and 30,000 reads a minute per key
});
afterAll(async () => {
  await t.close();
  await roomy.close();
});

/** A call that spends (refused by validation after the key's limit is counted: nothing is generated). */
const spend = (app: TestApp, auth: Record<string, string>) => app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 42 } });

async function submitImage(app: TestApp, auth: Record<string, string>): Promise<string> {
  const res = await app.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 'a cat' } });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id;
}

describe(`read limits [${backendName}]`, () => {
  it('reads have their own budget: they neither use up the calls that spend nor are refused once those are', async () => {
    await awayFromRateWindowEdge();
    const account = await seedAccount(t.ctx, 5);
    const reads = ['/v1/balance', '/balance', '/v1/user/balance', '/user/balance', '/v1/models'];
    for (let i = 0; i < 3; i++) {
      for (const url of reads) {
        const res = await t.app.inject({ method: 'GET', url, headers: account.auth });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBe('40');
      }
    }
    // 15 reads later, the key still has its 3 calls that spend.
    for (let i = 0; i < 3; i++) {
      const res = await spend(t, account.auth);
      expect(res.statusCode).toBe(400);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    expect((await spend(t, account.auth)).statusCode).toBe(429);
    // Out of calls that spend, the key still reads its balance and its tasks.
    const balance = await t.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth });
    expect(balance.statusCode).toBe(200);
    expect(balance.headers['ratelimit-remaining']).toBe('24');
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/task_unknown', headers: account.auth })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks?ids=task_unknown', headers: account.auth })).statusCode).toBe(200);
    // The read budget is a limit too.
    let last = 0;
    for (let i = 0; i < 30 && last !== 429; i++) last = (await t.app.inject({ method: 'GET', url: '/v1/models', headers: account.auth })).statusCode;
    expect(last).toBe(429);
  });

  it("a key's own larger rate_limit_rpm raises its read budget too", async () => {
    await awayFromRateWindowEdge();
    const account = await seedAccount(t.ctx, 1, { unlimited: true, rate_limit_rpm: 500 });
    const res = await t.app.inject({ method: 'GET', url: '/v1/balance', headers: account.auth });
    expect(res.headers['ratelimit-limit']).toBe('500');
  });

  it('by default a key polls 200 open tasks once a second and still submits', async () => {
    await awayFromRateWindowEdge(20_000);
    expect(roomy.ctx.config.readRateLimitRpm).toBe(30_000);
    const account = await seedAccount(roomy.ctx, 5);
    const task = await submitImage(roomy, account.auth);
    // More status reads in a minute than the key's 600 calls: all answered, none counted as calls.
    const polls = [];
    for (let wave = 0; wave < 14; wave++) {
      polls.push(...(await Promise.all(Array.from({ length: 50 }, () => roomy.app.inject({ method: 'GET', url: `/v1/tasks/${task}`, headers: account.auth })))));
    }
    expect(polls.filter((r) => r.statusCode !== 200).map((r) => `${r.statusCode} ${r.body}`)).toEqual([]);
    expect(Number(polls.at(-1)!.headers['ratelimit-remaining'])).toBeGreaterThan(29_000);
    const next = await roomy.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { prompt: 'a dog' } });
    expect(next.statusCode).toBe(200);
    expect(next.headers['ratelimit-remaining']).toBe('598');
  });
});

describe(`batch status read GET /v1/tasks?ids= [${backendName}]`, () => {
  it("answers the caller's own tasks in the order asked; unknown and other accounts' ids are absent", async () => {
    await awayFromRateWindowEdge();
    const alice = await seedAccount(roomy.ctx, 5);
    const bob = await seedAccount(roomy.ctx, 5);
    const mine = [await submitImage(roomy, alice.auth), await submitImage(roomy, alice.auth), await submitImage(roomy, alice.auth)];
    const theirs = await submitImage(roomy, bob.auth);
    const ids = [mine[2], theirs, 'task_does_not_exist', mine[0], mine[2], ` ${mine[1]} `].join(',');
    const res = await roomy.app.inject({ method: 'GET', url: `/v1/tasks?ids=${encodeURIComponent(ids)}`, headers: alice.auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body.code).toBe(200);
    expect(body.data.map((r: { id: string }) => r.id)).toEqual([mine[2], mine[0], mine[1]]);
    // Each record is the one a single read gives.
    const single = (await roomy.app.inject({ method: 'GET', url: `/v1/tasks/${mine[0]}`, headers: alice.auth })).json().data;
    expect(body.data[1]).toMatchObject({ id: single.id, status: expect.any(String), created: single.created });
    expect(Object.keys(body.data[1]).sort()).toEqual(Object.keys(single).sort());
    // Bob sees only his.
    const his = (await roomy.app.inject({ method: 'GET', url: `/v1/tasks?ids=${mine[0]},${theirs}`, headers: bob.auth })).json();
    expect(his.data.map((r: { id: string }) => r.id)).toEqual([theirs]);
  });

  it('up to 100 ids; more, none, or a missing ids is a 400; a key is required', async () => {
    const account = await seedAccount(roomy.ctx, 5);
    const ask = (query: string, headers: Record<string, string> = account.auth) => roomy.app.inject({ method: 'GET', url: `/v1/tasks${query}`, headers });
    const hundred = Array.from({ length: 100 }, (_, i) => `task_${i}`);
    expect((await ask(`?ids=${hundred.join(',')}`)).json()).toEqual({ code: 200, data: [] });
    const tooMany = await ask(`?ids=${[...hundred, 'task_100'].join(',')}`);
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error).toMatchObject({ code: 400, type: 'invalid_request_error' });
    expect(tooMany.json().error.message).toContain('100');
    expect((await ask('?ids=')).statusCode).toBe(400);
    expect((await ask('?ids=,,')).statusCode).toBe(400);
    expect((await ask('')).statusCode).toBe(400);
    expect((await ask(`?ids=${'x'.repeat(101)}`)).statusCode).toBe(400);
    expect((await ask('?ids=task_1', {})).statusCode).toBe(401);
  });
});
