import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A per-token image task (imglite-3.1) settles on the tokens its upstream counted; those counts are
// kept with the task, for the operator's task list, the console and the usage export.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SIMULATOR_LATENCY_MS: '20' }, undefined, { workers: true });
});
afterAll(() => t.close());

async function ended(taskId: string, auth: Record<string, string>) {
  for (let i = 0; i < 200; i++) {
    const res = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: auth });
    if (['completed', 'failed'].includes(res.json().data.status)) return res.json().data;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the task did not end');
}

describe(`counted tokens are kept with the task [${backendName}]`, () => {
  it('imglite-3.1: the operator sees the counts, the usage CSV carries them; a per-image task has none', async () => {
    const account = await seedAccount(t.ctx, 10);
    const submit = async (model: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...account.auth, 'content-type': 'application/json' }, payload: { model, prompt: 'a lighthouse at dawn' } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data[0].task_id as string;
    };
    const [perToken, perImage] = [await submit('imglite-3.1'), await submit('imggen-2')];
    await ended(perToken, account.auth);
    await ended(perImage, account.auth);

    const list = await t.app.inject({ method: 'GET', url: `/admin/tasks?user_id=${account.user.id}`, headers: adminHeaders });
    const byId = new Map(list.json().data.map((task: any) => [task.id, task]));
    const counted = (byId.get(perToken) as any).usage;
    expect(counted).toEqual({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.output_tokens).toBeGreaterThan(0);
    expect((byId.get(perImage) as any).usage).toBeNull();

    const csv = await t.app.inject({ method: 'GET', url: `/admin/usage.csv?user_id=${account.user.id}`, headers: adminHeaders });
    // The id is the tenth column; the token classes of text calls follow it.
    const row = csv.body.split('\r\n').map((line) => line.split(',')).find((cells) => cells[9] === perToken)!;
    expect(row.slice(5, 7).map(Number)).toEqual([counted.input_tokens, counted.output_tokens]);
  });
});
