import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/core/errors.ts';
import { normalizeAvatarRequest } from '../src/modules/catalog/avatar-rules.ts';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { freePort } from './support/gateway-process.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';

let t: TestApp;
let base: string;
let hooks: Receiver;
beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  hooks = await startReceiver();
  t = await createTestApp(
    { SIMULATOR_LATENCY_MS: '100', PUBLIC_BASE_URL: 'http://gateway.test', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' },
    undefined,
    { workers: true },
  );
  await t.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await hooks.close();
  await t.close();
});

const asset = (name: string) => ({ url: `https://cdn.example.com/${encodeURIComponent(name)}.png`, name });

function rejects(body: Record<string, unknown>, field: string) {
  try {
    normalizeAvatarRequest(body as any);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain(field);
    return;
  }
  throw new Error(`expected a 400 naming ${field}`);
}

async function call(method: 'GET' | 'POST', path: string, auth: Record<string, string>, body?: unknown) {
  const res = await request(`${base}${path}`, { method, headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.statusCode, json: (await res.body.json()) as any };
}

async function waitForEnd(taskId: string, auth: Record<string, string>) {
  let data: any;
  await waitUntil('the review to end', async () => {
    data = (await call('GET', `/v1/tasks/${taskId}`, auth)).json.data;
    return data.status === 'completed' || data.status === 'failed';
  });
  return data;
}

describe('4.3 avatar submission rules', () => {
  it('group and group_id: both is a 400, neither is a 400', () => {
    rejects({ group: { name: 'g' }, group_id: 'grp_1', assets: [asset('a')] }, 'group_id');
    rejects({ assets: [asset('a')] }, 'group');
  });
  it('assets: 0 rejected, 1 and 20 accepted, 21 rejected', () => {
    rejects({ group: { name: 'g' }, assets: [] }, 'assets');
    expect(normalizeAvatarRequest({ group: { name: 'g' }, assets: [asset('a')] }).assets).toHaveLength(1);
    expect(normalizeAvatarRequest({ group: { name: 'g' }, assets: Array.from({ length: 20 }, (_, i) => asset(`a${i}`)) }).assets).toHaveLength(20);
    rejects({ group: { name: 'g' }, assets: Array.from({ length: 21 }, (_, i) => asset(`a${i}`)) }, 'assets');
  });
  it('each asset needs url and name', () => {
    rejects({ group: { name: 'g' }, assets: [{ name: 'x' }] }, 'assets[0].url');
    rejects({ group: { name: 'g' }, assets: [asset('a'), { url: 'https://cdn.example.com/b.png' }] }, 'assets[1].name');
    rejects({ group: { name: 'g' }, assets: ['https://cdn.example.com/b.png'] }, 'assets[0]');
  });
  it('asset_type: Image (default), Video, Audio; anything else is a 400', () => {
    expect(normalizeAvatarRequest({ group: { name: 'g' }, assets: [asset('a')] })).toMatchObject({ assetType: 'Image', projectName: 'default' });
    expect(normalizeAvatarRequest({ group: { name: 'g' }, assets: [asset('a')], asset_type: 'Audio' }).assetType).toBe('Audio');
    rejects({ group: { name: 'g' }, assets: [asset('a')], asset_type: 'image' }, 'asset_type');
  });
  it('the single-asset form: url + name instead of assets; not both; not half of it', () => {
    expect(normalizeAvatarRequest({ group_id: 'grp_1', ...asset('solo') }).assets).toEqual([asset('solo')]);
    rejects({ group_id: 'grp_1', ...asset('solo'), assets: [asset('a')] }, 'assets');
    rejects({ group_id: 'grp_1', url: 'https://cdn.example.com/a.png' }, 'name');
  });
});

describe(`avatar review end to end [${backendName}]`, () => {
  it('a foreign group_id is a 400; wrong JSON types are 400s', async () => {
    const owner = await seedAccount(t.ctx, 5);
    const other = await seedAccount(t.ctx, 5);
    const made = await call('POST', '/v1/seedance2/private-avatar', owner.auth, { group: { name: 'mine' }, ...asset('one') });
    expect(made.status).toBe(200);
    const foreign = await call('POST', '/v1/seedance2/private-avatar', other.auth, { group_id: made.json.data.group_id, ...asset('two') });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error.message).toContain('group_id');
    const typed = await call('POST', '/v1/seedance2/private-avatar', other.auth, { group_id: 5, ...asset('x') });
    expect(typed.status).toBe(400);
  });

  it('all assets pass: completed, progress 100, all Active, failed_assets empty', async () => {
    const account = await seedAccount(t.ctx, 5);
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group: { name: 'cast', description: 'leads' }, assets: [asset('alice'), asset('bob')] });
    expect(submit.status).toBe(200);
    expect(submit.json).toEqual({
      code: 200,
      data: { id: expect.stringMatching(/^task_/), object: 'vidgen.avatar.asset.task', status: 'processing', progress: 10, model: 'vidgen-2.0-avatar-review', group_id: expect.stringMatching(/^grp_/) },
    });
    const record = await waitForEnd(submit.json.data.id, account.auth);
    expect(record).toMatchObject({ status: 'completed', progress: 100 });
    expect(record.error).toBeUndefined();
    const { assets, usable_assets, failed_assets, asset_url, group_id } = record.result;
    expect(assets).toHaveLength(2);
    for (const a of assets) expect(a).toEqual({ asset_id: expect.stringMatching(/^as_/), asset_url: `asset://${a.asset_id}`, status: 'Active' });
    expect(usable_assets).toEqual(assets);
    expect(failed_assets).toEqual([]);
    expect(asset_url).toBe(assets[0].asset_url);
    expect(group_id).toBe(submit.json.data.group_id);
  });

  it('a mixed submission fails with task_failed, keeps the passed assets usable, bills only them, and its callback says so', async () => {
    const account = await seedAccount(t.ctx, 1);
    const price = 0.01;
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, {
      group: { name: 'mixed' },
      assets: [asset('good-1'), asset('bad [sim:reject]'), asset('good-2')],
      webhook: hooks.url,
    });
    expect(submit.status).toBe(200);
    const taskId = submit.json.data.id;
    const record = await waitForEnd(taskId, account.auth);
    expect(record).toMatchObject({ status: 'failed', progress: 100, error: { code: 'task_failed' } });
    expect(record.error.message).toMatch(/1 of 3/);
    expect(record.result.usable_assets.map((a: any) => a.status)).toEqual(['Active', 'Active']);
    expect(record.result.failed_assets).toEqual([expect.objectContaining({ status: 'Failed' })]);
    expect(record.result.assets).toHaveLength(3);
    expect(record.cost).toBeCloseTo(price * 2);

    const balance = (await call('GET', '/v1/user/balance', account.auth)).json;
    expect(balance.used_balance).toBeCloseTo(price * 2);
    expect(balance.remain_balance).toBeCloseTo(1 - price * 2);
    expect(await auditLedger(t.ctx.db)).toEqual([]);

    await waitUntil('the callback', () => hooks.received.some((r) => JSON.parse(r.body).id === taskId));
    const pushed = JSON.parse(hooks.received.find((r) => JSON.parse(r.body).id === taskId)!.body);
    expect(pushed).toMatchObject({ status: 'failed', error: { code: 'task_failed' } });

    // The passed asset works in a vidgen-2.0 video, submitted directly without another review.
    const passed = record.result.usable_assets[0].asset_url;
    const failedUrl = record.result.failed_assets[0].asset_url;
    const video = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0', image_urls: [passed], duration: 4, resolution: '480p' });
    expect(video.status).toBe(200);
    const videoRecord = await waitForEnd(video.json.data[0].task_id, account.auth);
    expect(videoRecord.status).toBe('completed');
    expect(videoRecord.result.reference_assets).toEqual([{ asset_id: passed.slice(8), reviewed: true, reviewed_again: false }]);
    // ... not by vidgen-2.0-mini, not by another account, and a failed asset not at all.
    const mini = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0-mini', image_urls: [passed] });
    expect(mini.status).toBe(400);
    const stranger = await seedAccount(t.ctx, 5);
    const foreign = await call('POST', '/v1/videos/generations', stranger.auth, { model: 'vidgen-2.0', image_with_roles: [{ url: passed, role: 'reference_image' }] });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error.message).toContain(passed);
    const failed = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0', image_urls: [failedUrl] });
    expect(failed.status).toBe(400);
    expect(failed.json.error.message).toContain('Failed');
  });

  it('assets are listed for their owner and for operators', async () => {
    const account = await seedAccount(t.ctx, 5);
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group: { name: 'listed' }, ...asset('one') });
    await waitForEnd(submit.json.data.id, account.auth);
    const mine = (await call('GET', '/v1/seedance2/private-avatar/assets', account.auth)).json.data;
    expect(mine).toEqual([expect.objectContaining({ name: 'one', status: 'Active', group_id: submit.json.data.group_id })]);
    const groups = (await call('GET', '/v1/seedance2/private-avatar/groups', account.auth)).json.data;
    expect(groups).toEqual([expect.objectContaining({ group_id: submit.json.data.group_id, name: 'listed', kind: 'AIGC', project_name: 'default' })]);
    const admin = await t.app.inject({ method: 'GET', url: `/admin/assets?user_id=${account.user.id}`, headers: adminHeaders });
    expect(admin.json().data).toHaveLength(1);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/seedance2/private-avatar', '/v1/seedance2/private-avatar/assets', '/v1/seedance2/private-avatar/groups', '/admin/assets']));
  });
});
