import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Issue 20 item 11: the catalog and the text limits count prompts in characters, and an emoji is one character
// (two UTF-16 units). The limits count code points, and a refusal reports the code-point count.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const EMOJI = '\u{1F600}';
const submit = (url: string, auth: Record<string, string>, body: object) => t.app.inject({ method: 'POST', url, headers: auth, payload: body });

describe(`character limits count code points [${backendName}]`, () => {
  it('vidgen-2.0: 4000 emoji are accepted, 4001 are refused as "got 4001"', async () => {
    const account = await seedAccount(t.ctx, 100);
    const ok = await submit('/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: EMOJI.repeat(4000), duration: 4, resolution: '480p' });
    expect(ok.statusCode).toBe(200);
    const refused = await submit('/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: EMOJI.repeat(4001), duration: 4, resolution: '480p' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('got 4001');
  });

  it('a prompt mixing ASCII, CJK and emoji counts each as one character', async () => {
    const account = await seedAccount(t.ctx, 100);
    const mixed = `a漢${EMOJI}`.repeat(1333) + 'x'; // 4000 characters, 5333 UTF-16 units
    const ok = await submit('/v1/videos/generations', account.auth, { model: 'vidgen-2.0-fast', prompt: mixed, duration: 4, resolution: '480p' });
    expect(ok.statusCode).toBe(200);
    const refused = await submit('/v1/videos/generations', account.auth, { model: 'vidgen-2.0-fast', prompt: `${mixed}${EMOJI}`, duration: 4, resolution: '480p' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('got 4001');
  });

  it('images: 32,000 emoji are within the image prompt limit, 32,001 are refused as "got 32001"', async () => {
    const account = await seedAccount(t.ctx, 100);
    const ok = await submit('/v1/images/generations', account.auth, { model: 'imggen-2', prompt: EMOJI.repeat(32_000) });
    expect(ok.statusCode).toBe(200);
    const refused = await submit('/v1/images/generations', account.auth, { model: 'imggen-2', prompt: EMOJI.repeat(32_001) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('got 32001');
  });
});
