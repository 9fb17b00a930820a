import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

// A callback receiver that never answers holds a delivery for the whole attempt timeout, four times
// per task. One account's such receiver must not hold up the tasks of the others: deliveries wait
// in slots of their own, not in the WORKERS slots that hand tasks to their upstreams.

let t: TestApp;
let tarpit: Receiver;
beforeAll(async () => {
  tarpit = await startReceiver(() => 'hang');
  t = await createTestApp(
    { WORKERS: '2', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', WEBHOOK_TIMEOUT: '5', WEBHOOK_RETRY_DELAYS: '0.1,0.1,0.1', SIMULATOR_LATENCY_MS: '20' },
    undefined,
    { workers: true },
  );
});
afterAll(async () => {
  await t.close();
  await tarpit.close();
});

async function submit(auth: Record<string, string>, webhook?: string) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 'a cat', ...(webhook ? { webhook } : {}) } });
  expect(res.statusCode).toBe(200);
  return res.json().data[0].task_id as string;
}

const status = async (auth: Record<string, string>, id: string) => (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().data.status as string;

describe(`slow callback receivers [${backendName}]`, () => {
  it("one account's hanging receiver does not hold up another account's tasks", async () => {
    const slow = await seedAccount(t.ctx, 5);
    for (let i = 0; i < 4; i++) await submit(slow.auth, tarpit.url);
    // Every worker slot would now be waiting on the receiver.
    await waitUntil('the receiver holding deliveries', () => tarpit.received.length >= 2, 10_000);
    const other = await seedAccount(t.ctx, 5);
    const started = Date.now();
    const id = await submit(other.auth);
    await waitUntil("the other account's task", async () => (await status(other.auth, id)) === 'completed', 15_000);
    expect(Date.now() - started).toBeLessThan(2000);
  }, 30_000);
});

describe(`one callback host's share of the slots [${backendName}]`, () => {
  let s: TestApp;
  let hanging: Receiver;
  let prompt: Receiver;
  beforeAll(async () => {
    hanging = await startReceiver(() => 'hang');
    prompt = await startReceiver();
    // Four callback slots: a host may use one of them at a time.
    s = await createTestApp(
      { WEBHOOK_WORKERS: '4', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', WEBHOOK_TIMEOUT: '60', SIMULATOR_LATENCY_MS: '20' },
      undefined,
      { workers: true },
    );
  });
  afterAll(async () => {
    // The hanging receiver first, so the process's shutdown does not wait on its callback.
    await Promise.all([hanging.close(), prompt.close()]);
    await s.close();
  });

  it("a hanging receiver's many callbacks leave the other slots to other hosts", async () => {
    const slow = await seedAccount(s.ctx, 5);
    const other = await seedAccount(s.ctx, 5);
    const send = async (auth: Record<string, string>, webhook: string) => {
      const res = await s.app.inject({ method: 'POST', url: '/v1/images/generations', headers: auth, payload: { prompt: 'a cat', webhook } });
      expect(res.statusCode).toBe(200);
      return res.json().data[0].task_id as string;
    };
    await Promise.all(Array.from({ length: 6 }, () => send(slow.auth, hanging.url)));
    await waitUntil('the first callback hanging', () => hanging.received.length >= 1, 10_000);
    const id = await send(other.auth, prompt.url);
    await waitUntil("the other host's callback", () => prompt.received.some((r) => JSON.parse(r.body).id === id), 20_000);
    // The hanging host still holds its one slot; its other callbacks wait their turn.
    expect(hanging.received).toHaveLength(1);
  }, 40_000);
});
