import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';

// A big account's reads must not stall everyone else: the usage export yields to the event loop
// between pages, and the console's spend per key reads an index that covers it.

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_RPM: '100000' });
  const port = await freePort();
  await t.app.listen({ port, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => t.close());

const ROWS = 200_000;

/** `count` text calls of one key, inserted by one statement (a series the database makes itself). */
async function seedUsage(userId: string, keyId: string, count: number) {
  const now = Date.now() - 3_600_000;
  const columns = sql`insert into usage (user_id, key_id, model, endpoint, request_id, input_tokens, output_tokens, cost, status, created_at)`;
  const values = sql`select ${userId}, ${keyId}, 'textgen-2.5-flash', 'native', 'req-big-' || n, 10, 20, 37, 'ok', cast(${now} as bigint) + n`;
  await (t.ctx.dialect === 'postgres'
    ? sql`${columns} ${values} from generate_series(1, ${count}) as s(n)`
    : sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${count}) ${columns} ${values} from s`
  ).execute(t.ctx.db);
  // As a table in service has: the planner's statistics of its rows.
  await sql`analyze usage`.execute(t.ctx.db);
}

/**
 * How late a 10 ms timer ran while `work` ran: the longest single delay (the longest the event loop
 * was held at once) and the delays added up (how long it was held in all).
 */
async function lagDuring(work: () => Promise<unknown>): Promise<{ max: number; total: number }> {
  const lag = { max: 0, total: 0 };
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - last - 10);
    lag.max = Math.max(lag.max, late);
    lag.total += late;
    last = now;
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return lag;
}

/** A console session of the account's holder. */
async function holderCookie(userId: string): Promise<string> {
  const email = `${userId.toLowerCase()}@example.com`;
  const password = 'correct horse battery';
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${userId}/console-credentials`, headers: adminHeaders, payload: { email, password } });
  expect(set.statusCode).toBe(200);
  const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password } });
  expect(session.statusCode).toBe(200);
  return String(session.headers['set-cookie']).split(';')[0]!;
}

describe(`big accounts [${backendName}]`, () => {
  let account: Awaited<ReturnType<typeof seedAccount>>;
  beforeAll(async () => {
    account = await seedAccount(t.ctx, 1);
    await seedUsage(account.user.id, account.keyId, ROWS);
  }, 120_000);

  it(`exporting ${ROWS} rows keeps the event loop turning`, async () => {
    let lines = 0;
    const lag = await lagDuring(async () => {
      const res = await request(`${base}/admin/usage.csv?user_id=${account.user.id}`, { headers: adminHeaders });
      expect(res.statusCode).toBe(200);
      for await (const chunk of res.body) lines += (chunk as Buffer).toString('latin1').split('\n').length - 1;
    });
    expect(lines).toBe(ROWS + 1);
    // Before the export yielded between pages, the whole export was one hold (~0.9 s on a laptop).
    expect(lag.max).toBeLessThan(400);
  }, 120_000);

  it('eight spend-per-key reads at once hold the event loop briefly, and count new calls', async () => {
    const cookie = await holderCookie(account.user.id);
    const textCalls = async () => {
      const res = await request(`${base}/console/api/usage`, { headers: { cookie } });
      expect(res.statusCode).toBe(200);
      const { data } = (await res.body.json()) as { data: { key_id: string; text_calls: number; text_cost: number }[] };
      return data.find((k) => k.key_id === account.keyId)!;
    };
    expect((await textCalls()).text_calls).toBe(ROWS);
    await seedUsage(account.user.id, account.keyId, 10);
    const lag = await lagDuring(() => Promise.all(Array.from({ length: 8 }, async () => expect((await textCalls()).text_calls).toBe(ROWS + 10))));
    // Each read used to sum the account's rows from the table on its own (~1.6 s held in all on a laptop).
    expect(lag.total).toBeLessThan(400);
  }, 60_000);
});
