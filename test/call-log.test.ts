import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBalance } from '../src/lib/money.ts';
import { insertCalls, type CallRow } from '../src/modules/calls/calls.repo.ts';
import { adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Every text call and task submit leaves a call log row, refused and cut ones too, written off the
// request path; the operator reads them all, an account holder only its own and never a channel.

let t: TestApp;
let base: string;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => t?.close());

const messages = (content: string, extra: object = {}) => ({ model: 'chatgen-4-haiku', max_tokens: 16, messages: [{ role: 'user', content }], ...extra });
const post = (url: string, auth: Record<string, string>, payload: object) => t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const adminCalls = async (query: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/admin/calls?${query}`, headers: adminHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: any[]; next: string | null };
};
const adminCall = async (id: string) => (await t.app.inject({ method: 'GET', url: `/admin/calls/${id}`, headers: adminHeaders })).json();

async function consoleSession(userId: string) {
  const email = `${userId.toLowerCase()}@example.com`;
  const put = await t.app.inject({ method: 'PUT', url: `/admin/users/${userId}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(put.statusCode, put.body).toBe(200);
  const session = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
  return { cookie: String(session.headers['set-cookie']).split(';')[0]! };
}

/** The row, once the response and the call have both ended (the socket's close comes a moment after). */
async function logged(id: string) {
  for (let i = 0; i < 50; i++) {
    const res = await t.app.inject({ method: 'GET', url: `/admin/calls/${id}`, headers: adminHeaders });
    if (res.statusCode === 200) return res.json();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no call log row ${id}`);
}

describe(`call log [${backendName}]`, () => {
  it('a text call: its usage and cost are what the ledger charged, its channel named for the operator', async () => {
    const account = await seedAccount(t.ctx, 5);
    const res = await post('/v1/messages', { 'x-api-key': account.key }, messages('hello there'));
    expect(res.statusCode, res.body).toBe(200);
    const call = await logged(String(res.headers['x-request-id']));
    await t.ctx.textMoney.flush();
    const usage = await t.ctx.db.selectFrom('usage').selectAll().where('request_id', '=', call.id).executeTakeFirstOrThrow();
    expect(call).toMatchObject({ user_id: account.user.id, key_id: account.keyId, model: 'chatgen-4-haiku', surface: 'messages', status: 'ok', http_status: 200, error: null, first_token_ms: null, task_id: null });
    expect(call.key_name).toBeTypeOf('string');
    expect(call.channel).toMatchObject({ type: 'simulator' });
    expect(call.usage).toEqual({ input: usage.input_tokens, cache_read: usage.cache_read_tokens, cache_write: usage.cache_write_tokens, output: usage.output_tokens });
    expect(call.cost).toEqual({
      input: toBalance(usage.input_cost, t.ctx.config),
      cache_read: toBalance(usage.cache_read_cost, t.ctx.config),
      cache_write: toBalance(usage.cache_write_cost, t.ctx.config),
      output: toBalance(usage.output_cost, t.ctx.config),
      total: toBalance(usage.cost, t.ctx.config),
    });
    expect(call.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a stream has its first token time; a stream its caller cuts is aborted and pays its prompt', async () => {
    const account = await seedAccount(t.ctx, 5);
    const whole = await request(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...messages('stream it'), stream: true }) });
    await whole.body.text();
    const streamed = await logged(String(whole.headers['x-request-id']));
    expect(streamed).toMatchObject({ surface: 'chat', status: 'ok', http_status: 200 });
    expect(streamed.first_token_ms).toBeTypeOf('number');
    expect(streamed.first_token_ms).toBeLessThanOrEqual(streamed.latency_ms);

    const controller = new AbortController();
    const id = `req-cut-${Date.now()}`;
    const cut = request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'x-request-id': id, 'content-type': 'application/json' }, body: JSON.stringify(messages('slow one [sim:delay=5]', { stream: true })), signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await cut.catch(() => undefined);
    const aborted = await logged(id);
    expect(aborted).toMatchObject({ surface: 'messages', status: 'aborted', error: { code: 'client_closed' } });
    expect(aborted.usage.input).toBeGreaterThan(0);
    await t.ctx.textMoney.flush();
    const usage = await t.ctx.db.selectFrom('usage').selectAll().where('request_id', '=', id).executeTakeFirstOrThrow();
    expect(usage.status).toBe('aborted');
    expect(aborted.cost.total).toBe(toBalance(usage.cost, t.ctx.config));
  });

  it('refused calls are logged: 402 empty account, 403 model outside the key, 429 rate limited, 400 bad body', async () => {
    const empty = await seedAccount(t.ctx, 0);
    const r402 = await post('/v1/messages', { 'x-api-key': empty.key }, messages('hi'));
    expect(r402.statusCode).toBe(402);
    expect(await logged(String(r402.headers['x-request-id']))).toMatchObject({ status: 'refused', http_status: 402, error: { code: 'payment_required' }, usage: null, cost: null, channel: null });

    const narrow = await seedAccount(t.ctx, 5);
    const patched = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${narrow.keyId}`, headers: adminHeaders, payload: { models: ['chatgen-4-sonnet'] } });
    expect(patched.statusCode, patched.body).toBe(200);
    const r403 = await post('/v1/chat/completions', narrow.auth, messages('hi'));
    expect(r403.statusCode).toBe(403);
    expect(await logged(String(r403.headers['x-request-id']))).toMatchObject({ status: 'refused', http_status: 403, surface: 'chat', model: 'chatgen-4-haiku', key_id: narrow.keyId, error: { code: 'permission_error' } });

    await awayFromRateWindowEdge();
    const limited = await seedAccount(t.ctx, 5, { unlimited: true, rate_limit_rpm: 1 });
    expect((await post('/v1/messages', { 'x-api-key': limited.key }, messages('one'))).statusCode).toBe(200);
    const r429 = await post('/v1/messages', { 'x-api-key': limited.key }, messages('two'));
    expect(r429.statusCode).toBe(429);
    expect(await logged(String(r429.headers['x-request-id']))).toMatchObject({ status: 'refused', http_status: 429, error: { code: 'rate_limit_error' } });

    const r400 = await post('/v1/responses', narrow.auth, { model: 'chatgen-4-sonnet', input: 'hi', max_output_tokens: 'many' });
    expect(r400.statusCode).toBe(400);
    expect(await logged(String(r400.headers['x-request-id']))).toMatchObject({ status: 'refused', http_status: 400, surface: 'responses' });

    // No key, no account to log it under.
    const r401 = await post('/v1/messages', { 'x-api-key': 'sk-nope' }, messages('hi'));
    expect(r401.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `/admin/calls/${r401.headers['x-request-id']}`, headers: adminHeaders })).statusCode).toBe(404);
  });

  it('a task submit names its task and what it held', async () => {
    const account = await seedAccount(t.ctx, 5);
    const res = await post('/v1/images/generations', account.auth, { prompt: 'a lighthouse' });
    expect(res.statusCode, res.body).toBe(200);
    const taskId = res.json().data[0].task_id;
    const call = await logged(String(res.headers['x-request-id']));
    const task = await t.ctx.db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
    expect(call).toMatchObject({ surface: 'images', status: 'ok', task_id: taskId, model: task.model, usage: null, cost: { total: toBalance(task.hold_amount, t.ctx.config) } });

    const video = await post('/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: 'a clip', duration: 4, resolution: '480p' });
    expect(video.statusCode, video.body).toBe(200);
    expect(await logged(String(video.headers['x-request-id']))).toMatchObject({ surface: 'videos', status: 'ok', model: 'vidgen-2.0', task_id: video.json().data[0].task_id });

    const avatar = await post('/v1/seedance2/private-avatar', account.auth, { group: { name: 'cast' }, assets: [{ url: 'https://cdn.example.com/a.png', name: 'a' }] });
    expect(avatar.statusCode, avatar.body).toBe(200);
    const avatarCall = await logged(String(avatar.headers['x-request-id']));
    const avatarTask = await t.ctx.db.selectFrom('tasks').selectAll().where('id', '=', avatar.json().data.id).executeTakeFirstOrThrow();
    expect(avatarCall).toMatchObject({ surface: 'avatars', status: 'ok', task_id: avatarTask.id, cost: { total: toBalance(avatarTask.hold_amount, t.ctx.config) } });

    // A submit its account cannot pay is refused, and logged so.
    const empty = await seedAccount(t.ctx, 0);
    const unpaid = await post('/v1/images/generations', empty.auth, { prompt: 'a lighthouse' });
    expect(unpaid.statusCode).toBe(402);
    expect(await logged(String(unpaid.headers['x-request-id']))).toMatchObject({ surface: 'images', status: 'refused', http_status: 402, task_id: null });
  });

  it('native and gemini surfaces are logged; a token count is not', async () => {
    const account = await seedAccount(t.ctx, 5);
    const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 16 } };
    const native = await post('/v1beta/models/textgen-2.5-flash:generateContent', account.auth, body);
    expect(native.statusCode, native.body).toBe(200);
    expect(await logged(String(native.headers['x-request-id']))).toMatchObject({ surface: 'native', model: 'textgen-2.5-flash', status: 'ok' });
    const gemini = await post('/gemini/v1beta/models/textgen-2.5-flash:generateContent', { 'x-goog-api-key': account.key }, body);
    expect(gemini.statusCode, gemini.body).toBe(200);
    expect(await logged(String(gemini.headers['x-request-id']))).toMatchObject({ surface: 'gemini', status: 'ok' });
    const count = await post('/v1beta/models/textgen-2.5-flash:countTokens', account.auth, body);
    expect(count.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await t.app.inject({ method: 'GET', url: `/admin/calls/${count.headers['x-request-id']}`, headers: adminHeaders })).statusCode).toBe(404);
  });

  it('an account holder sees only its own calls, never a channel; filters and cursor paging', async () => {
    const mine = await seedAccount(t.ctx, 5);
    const theirs = await seedAccount(t.ctx, 5);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post('/v1/messages', { 'x-api-key': mine.key }, messages(`call ${i}`));
      ids.push(String(res.headers['x-request-id']));
    }
    const other = await post('/v1/messages', { 'x-api-key': theirs.key }, messages('not yours'));
    await logged(String(other.headers['x-request-id']));
    await logged(ids[4]!);

    const session = await consoleSession(mine.user.id);
    // The query cannot name another account: user_id is not a filter of the console's list.
    const named = await t.app.inject({ method: 'GET', url: `/console/api/calls?user_id=${theirs.user.id}`, headers: session });
    expect(named.statusCode).toBe(400);
    const list = await t.app.inject({ method: 'GET', url: '/console/api/calls?limit=2', headers: session });
    expect(list.statusCode, list.body).toBe(200);
    const seen: any[] = [];
    let page = list.json();
    for (;;) {
      seen.push(...page.data);
      if (!page.next) break;
      page = (await t.app.inject({ method: 'GET', url: `/console/api/calls?limit=2&after=${page.next}`, headers: session })).json();
    }
    // Newest first (calls in the same millisecond by id), each once across the pages.
    expect(seen.map((c) => c.id).sort()).toEqual([...ids].sort());
    expect(seen.map((c) => Date.parse(c.time))).toEqual(seen.map((c) => Date.parse(c.time)).sort((a, b) => b - a));
    expect(seen.every((c) => c.user_id === mine.user.id && !('channel' in c))).toBe(true);
    expect(JSON.stringify(seen)).not.toContain('simulator');
    expect((await t.app.inject({ method: 'GET', url: `/console/api/calls/${other.headers['x-request-id']}`, headers: session })).statusCode).toBe(404);
    const one = await t.app.inject({ method: 'GET', url: `/console/api/calls/${ids[0]}`, headers: session });
    expect(one.statusCode).toBe(200);
    expect(one.json()).not.toHaveProperty('channel');

    const byKey = await adminCalls(`key_id=${theirs.keyId}`);
    expect(byKey.data.map((c) => c.id)).toEqual([String(other.headers['x-request-id'])]);
    const channelId = (await adminCall(ids[0]!)).channel.id;
    expect((await adminCalls(`user_id=${mine.user.id}&channel_id=${channelId}&status=ok&model=chatgen-4-haiku`)).data).toHaveLength(5);
    expect((await adminCalls(`user_id=${mine.user.id}&status=refused`)).data).toHaveLength(0);
    const future = Math.floor(Date.now() / 1000) + 60;
    expect((await adminCalls(`user_id=${mine.user.id}&from=${future}`)).data).toHaveLength(0);
    expect((await adminCalls(`user_id=${mine.user.id}&to=${future}`)).data).toHaveLength(5);
    const bad = await t.app.inject({ method: 'GET', url: '/admin/calls?status=maybe', headers: adminHeaders });
    expect(bad.statusCode).toBe(400);
  });

  it("a caller cannot take the id the gateway is about to give another account's call: its row is never lost", async () => {
    const attacker = await seedAccount(t.ctx, 5);
    const victim = await seedAccount(t.ctx, 5);
    // Generated ids are this process's prefix and a count: the next ones can be read off any answer.
    const seen = String((await post('/v1/messages', attacker.auth, messages('hi'))).headers['x-request-id']);
    const [prefix, count] = seen.split('-') as [string, string];
    for (let i = 1; i <= 10; i++) {
      const claimed = `${prefix}-${(parseInt(count, 36) + i).toString(36)}`;
      expect((await post('/v1/messages', { ...attacker.auth, 'x-request-id': claimed }, messages('hi'))).statusCode).toBe(200);
    }
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(String((await post('/v1/messages', victim.auth, messages('mine'))).headers['x-request-id']));
    for (const id of ids) expect((await logged(id)).user_id).toBe(victim.user.id);
    // An id of the caller's own that is not in the gateway's form is still kept and echoed.
    const own = await post('/v1/messages', { ...attacker.auth, 'x-request-id': 'trace-7f3a' }, messages('hi'));
    expect(own.headers['x-request-id']).toBe('trace-7f3a');
    expect((await logged('trace-7f3a')).user_id).toBe(attacker.user.id);
  });

  it("a caller's request id sent again, by it or by another account, keeps a row per call", async () => {
    const one = await seedAccount(t.ctx, 5);
    const other = await seedAccount(t.ctx, 5);
    const id = `trace-again-${Date.now()}`;
    const sent = [one, one, other];
    for (const account of sent) {
      const res = await post('/v1/messages', { ...account.auth, 'x-request-id': id }, messages('hi'));
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-request-id']).toBe(id);
    }
    await t.ctx.callLog.flush();
    const rows = await t.ctx.db.selectFrom('calls').select(['id', 'user_id']).where('id', 'like', `${id}%`).orderBy('time').execute();
    expect(rows.map((r) => r.user_id).sort()).toEqual(sent.map((a) => a.user.id).sort());
    // The first keeps the id itself; each later one is filed under `<id>~<an id the gateway made>`.
    expect(rows.filter((r) => r.id === id)).toHaveLength(1);
    for (const row of rows.filter((r) => r.id !== id)) {
      expect(row.id).toMatch(new RegExp(`^${id}~[0-9a-f]{12}-[0-9a-z]+$`));
      expect((await logged(row.id)).user_id).toBe(row.user_id);
    }
    const mine = await consoleSession(other.user.id);
    const listed = (await t.app.inject({ method: 'GET', url: '/console/api/calls', headers: mine })).json().data;
    expect(listed.map((c: { id: string }) => c.id)).toEqual([rows.find((r) => r.user_id === other.user.id)!.id]);
  });

  it('the sweeper deletes rows past CALL_LOG_DAYS once, with two processes sweeping at once', async () => {
    const second = await createTestApp({}, t.database);
    try {
      const account = await seedAccount(t.ctx, 1);
      const old = Date.now() - 31 * 86_400_000;
      const row = (id: string, time: number): CallRow => ({
        id, time, user_id: account.user.id, key_id: account.keyId, model: 'chatgen-4-haiku', surface: 'messages', channel_id: null, channel_name: null, channel_type: null,
        status: 'ok', http_status: 200, error: null, latency_ms: 1, first_token_ms: null, usage: null, cost: null, task_id: null, bodies: null,
      });
      const olds = Array.from({ length: 2300 }, (_, i) => row(`old-${i}`, old - i));
      for (let i = 0; i < olds.length; i += 500) await insertCalls(t.ctx.db, olds.slice(i, i + 500));
      await insertCalls(t.ctx.db, [row('recent-1', Date.now() - 29 * 86_400_000)]);
      const [a, b] = await Promise.all([t.ctx.callLog.sweep(), second.ctx.callLog.sweep()]);
      expect(a + b).toBe(2300);
      const left = await t.ctx.db.selectFrom('calls').select('id').where('user_id', '=', account.user.id).execute();
      expect(left.map((r) => r.id)).toEqual(['recent-1']);
    } finally {
      await second.close();
    }
  });
});
