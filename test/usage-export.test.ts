import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { debit } from '../src/modules/billing/ledger.ts';
import { csvField, usageRows } from '../src/modules/console/usage-export.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';
import { waitUntil } from './support/receiver.ts';

// Usage export (issue 25): one CSV row per text call and per task, streamed, RFC 4180.

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_RPM: '100000', SIMULATOR_LATENCY_MS: '20' }, undefined, { workers: true });
  const port = await freePort();
  await t.app.listen({ port, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => t.close());

const SEEDED = 10_000;

/** Text calls billed as a settlement bills them: their usage rows and the ledger charge, in one transaction per page. */
async function seedTextCalls(userId: string, keyId: string, count: number) {
  for (let done = 0; done < count; done += 500) {
    const rows = Array.from({ length: Math.min(500, count - done) }, (_, i) => ({
      user_id: userId,
      key_id: keyId,
      model: 'textgen-2.5-flash',
      endpoint: 'native',
      request_id: `req-seed-${done + i}`,
      input_tokens: 10 + i,
      output_tokens: 20,
      cost: 37 + (i % 7),
      status: 'ok',
      created_at: Date.now() - 60_000 + done + i,
    }));
    await t.ctx.db.transaction().execute(async (trx) => {
      await trx.insertInto('usage').values(rows).execute();
      await debit(trx, 'charge', { userId, keyId, amount: rows.reduce((sum, r) => sum + r.cost, 0), note: 'seeded text calls' });
    });
  }
}

describe(`usage CSV [${backendName}]`, () => {
  it(`${SEEDED} text calls and real tasks and calls stream out, parse back with csv-parse and sum to the used balance`, async () => {
    const account = await seedAccount(t.ctx, 50);
    // A key name that needs quoting: a comma, quotes and a line break.
    const tricky = (await t.app.inject({ method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: account.user.id, name: 'ops, "night"\nshift', unlimited: true } })).json();
    const auth = { authorization: `Bearer ${tricky.key}` };
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: auth, payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.statusCode).toBe(200);
    }
    const tasks: string[] = [];
    for (let i = 0; i < 2; i++) tasks.push((await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { prompt: 'a cat' } })).json().data[0].task_id);
    await waitUntil('the tasks', async () => (await t.ctx.db.selectFrom('tasks').select('status').where('id', 'in', tasks).execute()).every((r) => r.status === 'completed'));
    await seedTextCalls(account.user.id, account.keyId, SEEDED);
    await t.ctx.textMoney.flush();
    const other = await seedAccount(t.ctx, 5); // another account's calls stay out of this export
    await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: other.auth, payload: { prompt: 'a dog' } });

    const res = await request(`${base}/admin/usage.csv?user_id=${account.user.id}`, { headers: adminHeaders });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="usage-usr_\w+-\d{4}-\d\d-\d\d\.csv"$/);
    expect(res.headers['transfer-encoding']).toBe('chunked'); // sent as it is read, never as one body
    expect(res.headers['content-length']).toBeUndefined();

    // Parsed as it arrives: only the sums and a few rows are kept.
    let rows = 0;
    let units = 0;
    let header: string[] = [];
    const kept: Record<string, string>[] = [];
    for await (const record of res.body.pipe(parse({ columns: (h: string[]) => (header = h) }))) {
      rows++;
      units += Math.round(Number(record.cost) * 1_000_000);
      if (record.key_id === tricky.id || record.endpoint !== 'native') kept.push(record);
    }
    // The usage by class comes after the first ten columns, which keep their order.
    expect(header).toEqual(['time', 'key_name', 'key_id', 'model', 'endpoint', 'input_tokens', 'output_tokens', 'cost', 'status', 'id', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost']);
    expect(rows).toBe(SEEDED + 3 + 2);
    const used = (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance;
    expect(units / 1_000_000).toBeCloseTo(used, 6);
    expect(kept.filter((r) => r.key_name === 'ops, "night"\nshift' && r.endpoint === 'messages' && r.model === 'chatgen-4-haiku')).toHaveLength(3);
    expect(kept.filter((r) => r.endpoint === '/v1/images/generations' && r.status === 'completed' && tasks.includes(r.id))).toHaveLength(2);
    expect(kept.every((r) => !Number.isNaN(Date.parse(r.time)))).toBe(true);
  }, 120_000);

  it('rows are read a page at a time: a call billed after the first row was read still comes out', async () => {
    const account = await seedAccount(t.ctx, 5);
    await seedTextCalls(account.user.id, account.keyId, 1200);
    const rows = usageRows(t.ctx.db, { userId: account.user.id });
    const first = await rows.next();
    expect(first.done).toBe(false);
    await seedTextCalls(account.user.id, account.keyId, 1);
    let count = 1;
    for await (const _ of rows) count++;
    expect(count).toBe(1201);
  });

  it("from/to bound the rows by time; an account holder downloads only the own account's", async () => {
    const account = await seedAccount(t.ctx, 5);
    await seedTextCalls(account.user.id, account.keyId, 3);
    const inWindow = (await t.ctx.db.selectFrom('usage').select('created_at').where('user_id', '=', account.user.id).orderBy('id').execute()).map((r) => Number(r.created_at));
    const from = Math.ceil(inWindow[1]! / 1000);
    const to = Math.floor(Date.now() / 1000) + 60;
    const csv = (await t.app.inject({ method: 'GET', url: `/admin/usage.csv?user_id=${account.user.id}&from=${from}&to=${to}`, headers: adminHeaders })).body;
    expect(csv.trim().split('\r\n').length - 1).toBe(inWindow.filter((at) => at >= from * 1000).length);
    expect((await t.app.inject({ method: 'GET', url: `/admin/usage.csv?from=abc`, headers: adminHeaders })).statusCode).toBe(400);

    const email = `${account.user.id.toLowerCase()}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'correct horse battery' }, remoteAddress: '10.7.7.7' });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const own = await t.app.inject({ method: 'GET', url: '/console/api/usage.csv?user_id=usr_someone_else', headers: { cookie } });
    expect(own.statusCode).toBe(200);
    const lines = own.body.trim().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).every((l) => l.includes(account.keyId))).toBe(true);
    expect((await t.app.inject({ method: 'GET', url: '/console/api/usage.csv' })).statusCode).toBe(401);
  });
});

describe(`usage CSV: cells a spreadsheet would run [${backendName}]`, () => {
  it("key names and a caller's request id that start a formula come out as text; our numbers stay numbers", async () => {
    const account = await seedAccount(t.ctx, 5);
    const names = ['=HYPERLINK("http://evil.example","x")', '+cmd|\' /C calc\'!A0', '-2+3', '@SUM(1+1)', '\t=1+1', '\r=1+1'];
    const keys: { id: string; key: string; name: string }[] = [];
    for (const name of names) {
      const created = await t.app.inject({ method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: account.user.id, name, unlimited: true } });
      expect(created.statusCode).toBe(201);
      keys.push({ ...created.json(), name });
    }
    // A request id the caller chose is kept only when it is safe; `-2-3` is replaced by one of ours.
    const call = await t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { authorization: `Bearer ${keys[2]!.key}`, 'x-request-id': '-2-3' },
      payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(call.statusCode).toBe(200);
    expect(call.headers['x-request-id']).not.toBe('-2-3');
    expect(call.headers['x-request-id']).toMatch(/^[A-Za-z0-9][\w.:-]*$/);
    const kept = await t.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${keys[0]!.key}`, 'x-request-id': 'trace.42:a-b_c' } });
    expect(kept.headers['x-request-id']).toBe('trace.42:a-b_c');
    for (const key of keys) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { authorization: `Bearer ${key.key}` }, payload: { model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.statusCode).toBe(200);
    }
    await t.ctx.textMoney.flush();

    const email = `${account.user.id.toLowerCase()}@example.com`;
    await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: 'correct horse battery' } });
    const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: 'correct horse battery' }, remoteAddress: '10.7.7.8' });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    for (const res of [
      await t.app.inject({ method: 'GET', url: `/admin/usage.csv?user_id=${account.user.id}`, headers: adminHeaders }),
      await t.app.inject({ method: 'GET', url: '/console/api/usage.csv', headers: { cookie } }),
    ]) {
      expect(res.statusCode).toBe(200);
      const records: Record<string, string>[] = [];
      for await (const record of Readable.from([res.body]).pipe(parse({ columns: true }))) records.push(record);
      expect(records).toHaveLength(names.length + 1);
      // No cell begins with a character that makes a spreadsheet evaluate it, except our numbers.
      for (const record of records) {
        for (const [column, cell] of Object.entries(record)) {
          if (['input_tokens', 'output_tokens', 'cost'].includes(column)) expect(Number.isFinite(Number(cell))).toBe(true);
          else expect(cell).not.toMatch(/^[=+\-@\t\r]/);
        }
      }
      // Each name is still readable: the same text after the quote a spreadsheet hides.
      for (const name of names) expect(records.some((r) => r.key_name === `'${name}`)).toBe(true);
      expect(records.some((r) => r.id === '-2-3' || r.id === "'-2-3")).toBe(false);
    }
  });

  it('a cell is quoted when it must be, and only text gets the leading quote', () => {
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('-2,3')).toBe(`"'-2,3"`);
    expect(csvField('\r=1')).toBe(`"'\r=1"`);
    expect(csvField('a "b"')).toBe('"a ""b"""');
    expect(csvField('plain')).toBe('plain');
    expect(csvField(-1.5)).toBe('-1.5');
    expect(csvField(0)).toBe('0');
  });
});
