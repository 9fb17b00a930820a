import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// imglite-3.1 is priced per token, so its prompt is counted at submit: with the same counter as
// text prompts (special tokens are text, long runs are cut into pieces), not the raw tokenizer,
// which threw on a special token (a 500).

let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
  auth = (await seedAccount(t.ctx, 50)).auth;
});
afterAll(() => t.close());

const submit = (prompt: string) =>
  t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...auth, 'content-type': 'application/json' }, payload: { model: 'imglite-3.1', prompt } });

describe(`per-token image prompts [${backendName}]`, () => {
  it('a prompt holding a special token is an ordinary prompt, not a 500', async () => {
    const res = await submit('a poster that reads <|endoftext|> in neon');
    expect(res.statusCode, res.body).toBe(200);
  });
});
