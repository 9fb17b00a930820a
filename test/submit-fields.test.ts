import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// The task submits take only their documented fields (an unknown one, at any depth, is a 400 naming
// it), and a documented field with a value no model takes is a 400 naming it even when the chosen
// model does not read that field.

let t: TestApp;
beforeAll(async () => {
  // No workers: a receipt is all these tests need.
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

const IMAGES = '/v1/images/generations';
const VIDEOS = '/v1/videos/generations';
const AVATARS = '/v1/seedance2/private-avatar';
const asset = { url: 'https://e.com/a.png', name: 'x' };

describe(`task submit fields [${backendName}]`, () => {
  async function expect400(url: string, payload: Record<string, unknown>, ...named: string[]) {
    const account = await seedAccount(t.ctx, 5);
    const res = await t.app.inject({ method: 'POST', url, headers: account.auth, payload });
    expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, type: 'invalid_request_error' });
    for (const field of named) expect(res.json().error.message).toContain(field);
    expect((await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: account.auth })).json().used_balance).toBe(0);
  }
  async function expect200(url: string, payload: Record<string, unknown>) {
    const account = await seedAccount(t.ctx, 5);
    const res = await t.app.inject({ method: 'POST', url, headers: account.auth, payload });
    expect(res.statusCode, res.body).toBe(200);
  }

  it('an unknown field is a 400 naming it: top level and nested, on every task submit', async () => {
    await expect400(IMAGES, { model: 'imggen-2', prompt: 'x', junk: 1 }, 'Unknown field "junk"');
    await expect400(VIDEOS, { model: 'vidgen-2.0', prompt: 'x', junk: 1 }, 'Unknown field "junk"');
    await expect400(VIDEOS, { model: 'vidgen-2.0', image_with_roles: [{ url: asset.url, role: 'first_frame', junk: 1 }] }, 'Unknown field "image_with_roles.0.junk"');
    await expect400(VIDEOS, { model: 'vidgen-2.0', prompt: 'x', tools: [{ type: 'web_search', junk: 1 }] }, 'Unknown field "tools.0.junk"');
    await expect400(AVATARS, { group: { name: 'g' }, assets: [asset], junk: 1 }, 'Unknown field "junk"');
    await expect400(AVATARS, { group: { name: 'g', junk: 2 }, assets: [asset] }, 'Unknown field "group.junk"');
    await expect400(AVATARS, { group: { name: 'g' }, assets: [{ ...asset, junk: 1 }] }, 'Unknown field "assets[0].junk"');
  });

  it("the other family's ratio field: an invalid value is a 400 naming it", async () => {
    await expect400(VIDEOS, { model: 'vidgen-2.0', prompt: 'x', aspect_ratio: 'garbage' }, 'aspect_ratio', 'garbage');
    await expect400(VIDEOS, { model: 'vidgen-1-5-pro', prompt: 'x', size: 'garbage' }, 'size', 'garbage');
    await expect400(VIDEOS, { model: 'vidgen-1-0-pro-fast', prompt: 'x', size: '4:5' }, 'size');
    // `adaptive` is a 2.0 size; 1.x aspect ratios do not have it.
    await expect400(VIDEOS, { model: 'vidgen-2.0', prompt: 'x', aspect_ratio: 'adaptive' }, 'aspect_ratio');
  });

  it("imggen-2-official's own fields on another model: an invalid value is a 400 naming it", async () => {
    await expect400(IMAGES, { model: 'imggen-2', prompt: 'x', quality: 'ultra' }, 'quality');
    await expect400(IMAGES, { model: 'imgflash', prompt: 'x', background: 'green' }, 'background');
    await expect400(IMAGES, { model: 'imggen-2', prompt: 'x', moderation: 'none' }, 'moderation');
    await expect400(IMAGES, { model: 'imggen-2', prompt: 'x', mask_url: 'https://e.com/m.png' }, 'mask_url');
  });

  it('the documented fields, valid, still submit (including ones the model does not read)', async () => {
    await expect200(IMAGES, { model: 'imggen-2', prompt: 'x', size: '16:9', resolution: '2k', n: 2, quality: 'high', webhook: 'https://e.com/hooks' });
    await expect200(VIDEOS, { model: 'vidgen-1-5-pro', prompt: 'x', aspect_ratio: '9:16', size: '1:1', return_last_frame: false });
    await expect200(VIDEOS, { model: 'vidgen-2.0', prompt: 'x', size: 'adaptive', aspect_ratio: '16:9', tools: [{ type: 'web_search' }] });
    await expect200(AVATARS, { group: { name: 'g', description: 'd' }, assets: [asset], project_name: 'p', asset_type: 'Image' });
    await expect200(AVATARS, { group: { name: 'g' }, url: asset.url, name: asset.name });
  });
});
