import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Operators replace prices at run time; every process (here: a second app on the same database)
// picks the stored table up, and a table that leaves a served model unpriced is refused.

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await createTestApp();
  b = await createTestApp({}, a.database);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const get = (t: TestApp) => t.app.inject({ method: 'GET', url: '/admin/prices', headers: adminHeaders });

describe(`operator prices [${backendName}]`, () => {
  it('a saved table is used for the next quote, by every process; DELETE goes back to the file', async () => {
    const original = (await get(a)).json();
    expect(original.source).toBe('file');
    const models = structuredClone(original.models);
    models['imggen-2'].per_image = { '1k': 0.5, '2k': 0.5, '4k': 0.5 };
    const saved = await a.app.inject({ method: 'PUT', url: '/admin/prices', headers: adminHeaders, payload: { models } });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({ source: 'database', models: { 'imggen-2': { per_image: { '1k': 0.5 } } } });

    await b.ctx.prices.sync(); // what its timer does every two seconds
    const account = await seedAccount(b.ctx, 10);
    const submit = await b.app.inject({ method: 'POST', url: '/v1/images/generations', headers: account.auth, payload: { model: 'imggen-2', prompt: 'x', n: 2 } });
    expect(submit.statusCode).toBe(200);
    const balance = await b.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth });
    expect(balance.json().remain_balance).toBe(9);

    expect((await a.app.inject({ method: 'DELETE', url: '/admin/prices', headers: adminHeaders })).json()).toEqual(original);
  });

  it('a table that leaves a model without a price, or has a bad value, is a 400 naming it', async () => {
    const { models } = (await get(a)).json();
    const { ['vidgen-2.0']: _dropped, ...rest } = models;
    const missing = await a.app.inject({ method: 'PUT', url: '/admin/prices', headers: adminHeaders, payload: { models: rest } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toContain('vidgen-2.0');
    const negative = await a.app.inject({ method: 'PUT', url: '/admin/prices', headers: adminHeaders, payload: { models: { ...models, 'imggen-2': { per_image: { '1k': -1 } } } } });
    expect(negative.statusCode).toBe(400);
    expect(negative.json().error.message).toContain('imggen-2');
    expect((await get(a)).json().source).toBe('file');
  });
});
