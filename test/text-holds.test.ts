import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { settleLostHolds } from '../src/modules/text-money/sweeper.ts';
import { backendName, createTestApp, freshDatabase, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways } from './support/gateway-process.ts';
import { waitUntil } from './support/receiver.ts';

// A text call holds the prompt plus max_tokens before it calls the upstream. When its process dies
// mid-call nothing settles that hold; the sweeper gives it back once it is older than any call can
// last (TEXT_HOLD_MAX_AGE_S), and a call that does finish after that is never refunded twice.

// Each call holds alone here; text-floats.test.ts covers calls taken from a process's float.
const ALONE = { TEXT_FLOAT_CALLS: '0' };
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await stopAllGateways();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const slowCall = (prompt: string) => ({ model: 'chatgen-4-haiku', max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
const openHolds = (t: TestApp) => t.ctx.db.selectFrom('text_holds').selectAll().execute();
const usageOf = (t: TestApp, userId: string) => t.ctx.db.selectFrom('usage').select(['status', 'cost', 'input_tokens', 'output_tokens']).where('user_id', '=', userId).execute();

describe(`lost text holds [${backendName}]`, () => {
  it('a process SIGKILLed mid-call: the next process gives the whole hold back, with a usage row "lost"', async () => {
    const database = await freshDatabase();
    const api = await createTestApp({ WORKERS: '0', ...ALONE }, database);
    cleanups.push(() => database.drop(), () => api.close());
    const account = await seedAccount(api.ctx, 1);

    const first = await startGateway({ ...database.env, WORKERS: '0', ...ALONE });
    const call = request(`${first.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.key },
      body: JSON.stringify({ ...slowCall('lost in flight [sim:delay=30]'), stream: true }),
    }).catch(() => undefined); // the connection dies with the process
    await waitUntil('the hold to be written', async () => (await openHolds(api)).length === 1);
    const [held] = await openHolds(api);
    expect(await first.stop('SIGKILL')).toBeNull();
    await call;
    expect(held).toMatchObject({ user_id: account.user.id, key_id: account.keyId, model: 'chatgen-4-haiku', endpoint: 'messages' });
    expect((await getUser(api.ctx.db, account.user.id))!.balance).toBe(1_000_000 - Number(held!.amount));

    // A process with workers sweeps: with a one-second age the hold is past it at once.
    await startGateway({ ...database.env, WORKERS: '1', TEXT_HOLD_MAX_AGE_S: '1' }, 'src/cli.ts', ['worker']);
    await waitUntil('the hold to be given back', async () => (await openHolds(api)).length === 0, 30_000);
    expect(await getUser(api.ctx.db, account.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await usageOf(api, account.user.id)).toEqual([{ status: 'lost', cost: 0, input_tokens: 0, output_tokens: 0 }]);
    const ledger = await api.ctx.db.selectFrom('ledger').select(['kind', 'balance_delta']).where('ref', '=', held!.call_id).orderBy('id').execute();
    expect(ledger.map((r) => [r.kind, Number(r.balance_delta)])).toEqual([['hold', -Number(held!.amount)], ['refund', Number(held!.amount)]]);
    expect(await auditLedger(api.ctx.db)).toEqual([]);
  }, 90_000);

  it('a call that outlives the age is settled as lost once; its own late settlement moves no money', async () => {
    const t = await createTestApp({ WORKERS: '0', TEXT_HOLD_MAX_AGE_S: '1', ...ALONE });
    cleanups.push(() => t.close());
    const account = await seedAccount(t.ctx, 1);
    const answer = t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: slowCall('still running [sim:delay=2.5]') });
    await waitUntil('the hold to be written', async () => (await openHolds(t)).length === 1);
    await waitUntil('the hold to pass the age', async () => (await settleLostHolds(t.ctx)) === 1);
    expect(await settleLostHolds(t.ctx)).toBe(0);
    const res = await answer;
    expect(res.statusCode).toBe(200);
    expect(res.json().usage.output_tokens).toBeGreaterThan(0);
    // Given back in full by the sweep; the finished call found its hold settled and charged nothing more.
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 1_000_000, used: 0 });
    expect(await usageOf(t, account.user.id)).toEqual([{ status: 'lost', cost: 0, input_tokens: 0, output_tokens: 0 }]);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
  }, 30_000);

  it('a call that settles normally leaves no open hold for the sweeper', async () => {
    const t = await createTestApp({ WORKERS: '0', TEXT_HOLD_MAX_AGE_S: '1', ...ALONE });
    cleanups.push(() => t.close());
    const account = await seedAccount(t.ctx, 1);
    const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: slowCall('quick') });
    expect(res.statusCode).toBe(200);
    await t.ctx.textMoney.flush();
    expect(await openHolds(t)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await settleLostHolds(t.ctx)).toBe(0);
    const [usage] = await usageOf(t, account.user.id);
    expect(usage!.status).toBe('ok');
    expect((await getUser(t.ctx.db, account.user.id))!.used).toBe(Number(usage!.cost));
  }, 30_000);
});
