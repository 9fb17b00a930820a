import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../src/modules/billing/ledger.audit.ts';
import { signRequest } from '../src/providers/ark/ark.signing.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { checkSignature, startFakeArkAssets, type FakeArkAssets } from './support/fake-ark-assets.ts';
import { startFakeArkVideo, type FakeArkVideo } from './support/fake-ark-video.ts';

// Avatar review on the ark channel through ModelArk's asset library (a strict, signature-checking
// local fake: test/support/fake-ark-assets.ts), and the reviewed assets used by a video there.

let assets: FakeArkAssets;
let video: FakeArkVideo;
let t: TestApp;
let channelId: string;
const PRICE = 0.01; // vidgen-2.0-avatar-review, per passed asset
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const asset = (name: string) => ({ url: `https://cdn.example.com/${encodeURIComponent(name)}.png`, name });

beforeAll(async () => {
  // Still processing at the first read, however late a loaded machine makes it: the poll is seen.
  assets = await startFakeArkAssets({ processingMs: 150, processingReads: 1 });
  video = await startFakeArkVideo({ queuedMs: 20, runningMs: 20 });
  t = await createTestApp({ UPSTREAM_POLL_MS: '50', UPSTREAM_MAX_POLL_MS: '100', UPSTREAM_CALLBACKS: 'off', RESULT_FETCH_RETRY_DELAYS: '0' }, undefined, { workers: true });
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: {
      name: 'modelark',
      type: 'ark',
      base_url: video.url,
      secret: video.apiKey,
      models: ['vidgen-2.0', 'vidgen-2.0-avatar-review'],
      model_mapping: { 'vidgen-2.0': 'dreamina-seedance-2-0-260128' },
      priority: 10,
      options: { access_key_id: assets.accessKeyId, secret_access_key: assets.secretAccessKey, region: assets.region, openapi_base_url: assets.url },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  channelId = res.json().id ?? res.json().data?.id;
});
afterAll(async () => {
  await t?.close();
  await assets?.close();
  await video?.close();
});

async function call(method: 'GET' | 'POST', url: string, auth: Record<string, string>, payload?: unknown) {
  const res = await t.app.inject({ method, url, headers: auth, payload: payload as any });
  return { status: res.statusCode, json: res.json() };
}

async function ended(id: string, auth: Record<string, string>, timeoutMs = 8000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const data = (await call('GET', `/v1/tasks/${id}`, auth)).json.data;
    if (data.status === 'completed' || data.status === 'failed' || Date.now() > until) return data;
    await sleep(25);
  }
}

const upstreamOf = async (taskId: string) => {
  const row = await t.ctx.db.selectFrom('tasks').select('upstream_id').where('id', '=', taskId).executeTakeFirstOrThrow();
  return JSON.parse(row.upstream_id!) as { group: string; assets: Record<string, string | null> };
};

describe('the asset library signature', () => {
  // Computed by the vendor's own signer: volcengine-python-sdk volcenginesdkcore/signv4.py (commit
  // b5be43b5), SignerV4.sign('/', 'POST', headers, body, None, {Action, Version}, ak, sk,
  // 'ap-southeast-1', 'ark') with utcnow() fixed at 2024-01-02 03:04:05.
  const vector = {
    ak: 'AKTESTEXAMPLE',
    sk: 'c2VjcmV0LWV4YW1wbGU=',
    body: '{"Name":"Ava","GroupType":"AIGC","ProjectName":"default"}',
    bodyHash: 'fbdaccaf252cc3918b0c469294f2c2d6b69a275529f850c00e019639113fb7cb',
    authorization:
      'HMAC-SHA256 Credential=AKTESTEXAMPLE/20240102/ap-southeast-1/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=171a784ac04bf16d6caac74dc7f1da14f3343c415890d1100705d3c618e1cfb7',
  };
  const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));

  it('our signer gives the signature the vendor SDK computes', () => {
    const headers = signRequest(
      { accessKeyId: vector.ak, secretAccessKey: vector.sk, region: 'ap-southeast-1', service: 'ark' },
      { method: 'POST', url: new URL('https://open.byteplusapi.com/?Action=CreateAssetGroup&Version=2024-01-01'), headers: { 'Content-Type': 'application/json' }, body: vector.body, now: at },
    );
    expect(headers).toEqual({ 'Content-Type': 'application/json', Host: 'open.byteplusapi.com', 'X-Date': '20240102T030405Z', 'X-Content-Sha256': vector.bodyHash, Authorization: vector.authorization });
  });

  it("the fake's own verifier accepts the SDK's request and refuses it once anything signed changes", () => {
    const keys = { accessKeyId: vector.ak, secretAccessKey: vector.sk, region: 'ap-southeast-1' };
    const received = {
      method: 'POST',
      target: '/?Action=CreateAssetGroup&Version=2024-01-01',
      headers: { 'content-type': 'application/json', host: 'open.byteplusapi.com', 'x-date': '20240102T030405Z', 'x-content-sha256': vector.bodyHash, authorization: vector.authorization },
      body: Buffer.from(vector.body),
    };
    expect(checkSignature(received, keys, at.getTime())).toBeUndefined();
    expect(checkSignature({ ...received, body: Buffer.from(vector.body.replace('Ava', 'Eve')) }, keys, at.getTime())?.code).toBe('SignatureDoesNotMatch');
    expect(checkSignature({ ...received, target: '/?Action=CreateAsset&Version=2024-01-01' }, keys, at.getTime())?.code).toBe('SignatureDoesNotMatch');
    expect(checkSignature(received, { ...keys, secretAccessKey: 'other' }, at.getTime())?.code).toBe('SignatureDoesNotMatch');
    expect(checkSignature(received, keys, at.getTime() + 3_600_000)?.code).toBe('InvalidTimestamp');
  });

  it('an unsigned call gets the public error envelope (401, ResponseMetadata.Error)', async () => {
    const res = await request(`${assets.url}/?Action=GetAsset&Version=2024-01-01`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Id":"x"}' });
    expect(res.statusCode).toBe(401);
    expect(await res.body.json()).toMatchObject({ ResponseMetadata: { Action: 'GetAsset', Version: '2024-01-01', Service: 'ark', Error: { Code: 'MissingAuthenticationToken', CodeN: 100003 } } });
  });
});

describe(`avatar review through the ModelArk asset library [${backendName}]`, () => {
  let passedAsset: { ours: string; theirs: string; auth: Record<string, string> };

  it('all pass: AIGC group and one CreateAsset per asset, GetAsset until Active, completed and billed per asset', async () => {
    const account = await seedAccount(t.ctx, 50);
    const before = assets.calls.length;
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group: { name: 'cast', description: 'the leads' }, assets: [asset('alice'), asset('bob')] });
    expect(submit.status).toBe(200);
    const record = await ended(submit.json.data.id, account.auth);
    expect(record).toMatchObject({ status: 'completed', progress: 100 });
    const { assets: entries, usable_assets, failed_assets, asset_url, group_id } = record.result;
    expect(entries).toHaveLength(2);
    for (const a of entries) expect(a).toEqual({ asset_id: expect.stringMatching(/^as_/), asset_url: `asset://${a.asset_id}`, status: 'Active' });
    expect(usable_assets).toEqual(entries);
    expect(failed_assets).toEqual([]);
    expect(asset_url).toBe(entries[0].asset_url);
    expect(group_id).toBe(submit.json.data.group_id);
    expect(record.cost).toBeCloseTo(PRICE * 2);

    const calls = assets.calls.slice(before);
    expect(calls.every((c) => c.signed)).toBe(true);
    expect(calls.map((c) => c.action).slice(0, 3)).toEqual(['CreateAssetGroup', 'CreateAsset', 'CreateAsset']);
    expect(calls[0]!.body).toEqual({ Name: 'cast', Description: 'the leads', GroupType: 'AIGC', ProjectName: 'default' });
    const upstream = await upstreamOf(submit.json.data.id);
    expect(assets.groups.get(upstream.group)).toMatchObject({ Name: 'cast', GroupType: 'AIGC' });
    expect(calls[1]!.body).toEqual({ GroupId: upstream.group, URL: asset('alice').url, Name: 'alice', AssetType: 'Image', ProjectName: 'default' });
    expect(calls[2]!.body).toEqual({ GroupId: upstream.group, URL: asset('bob').url, Name: 'bob', AssetType: 'Image', ProjectName: 'default' });
    // Polled while the library was still processing, then each asset once more when Active.
    const gets = calls.filter((c) => c.action === 'GetAsset');
    expect(gets.length).toBeGreaterThan(2);
    for (const a of entries) {
      const theirs = upstream.assets[a.asset_id]!;
      expect(assets.assets.get(theirs)).toMatchObject({ GroupId: upstream.group, AssetType: 'Image' });
      expect(gets.some((g) => g.body.Id === theirs)).toBe(true);
    }
    const rows = await t.ctx.db.selectFrom('assets').select(['id', 'status']).where('group_id', '=', group_id).execute();
    expect(rows.map((r) => r.status)).toEqual(['Active', 'Active']);
    passedAsset = { ours: entries[0].asset_id, theirs: upstream.assets[entries[0].asset_id]!, auth: account.auth };

    // group_id: the upstream group recorded by that review is reused, not made again.
    const more = assets.calls.length;
    const again = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group_id, ...asset('carol') });
    expect(again.status).toBe(200);
    expect((await ended(again.json.data.id, account.auth)).status).toBe('completed');
    const later = assets.calls.slice(more);
    expect(later.map((c) => c.action)).not.toContain('CreateAssetGroup');
    expect(later.find((c) => c.action === 'CreateAsset')!.body.GroupId).toBe(upstream.group);
  });

  it('one fails: failed with task_failed, the passed assets usable and billed, the failed one Failed', async () => {
    const account = await seedAccount(t.ctx, 1);
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group: { name: 'mixed' }, assets: [asset('good-1'), asset('bad [ark:reject]'), asset('good-2')] });
    expect(submit.status).toBe(200);
    const record = await ended(submit.json.data.id, account.auth);
    expect(record).toMatchObject({ status: 'failed', progress: 100, error: { code: 'task_failed' } });
    expect(record.error.message).toMatch(/1 of 3 assets failed review: bad \[ark:reject\] \(ContentRestricted\)/);
    expect(record.result.assets.map((a: any) => a.status)).toEqual(['Active', 'Failed', 'Active']);
    expect(record.result.usable_assets.map((a: any) => a.status)).toEqual(['Active', 'Active']);
    expect(record.result.failed_assets).toEqual([expect.objectContaining({ status: 'Failed' })]);
    expect(record.cost).toBeCloseTo(PRICE * 2);
    const balance = (await call('GET', '/v1/user/balance', account.auth)).json;
    expect(balance.remain_balance).toBeCloseTo(1 - PRICE * 2);
    expect(await auditLedger(t.ctx.db)).toEqual([]);
    const usable = record.result.usable_assets[0].asset_id;
    const failed = record.result.failed_assets[0].asset_id;
    // A passed asset of a failed review is usable in a video; the failed one is refused.
    const ok = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: 'p', duration: 4, image_urls: [`asset://${usable}`] });
    expect(ok.status).toBe(200);
    const refused = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: 'p', duration: 4, image_urls: [`asset://${failed}`] });
    expect(refused.status).toBe(400);
  });

  it('an asset:// value reaches the ModelArk video API as the upstream asset id', async () => {
    const account = { auth: passedAsset.auth };
    const res = await call('POST', '/v1/videos/generations', account.auth, { model: 'vidgen-2.0', prompt: 'she waves', duration: 4, image_urls: [`asset://${passedAsset.ours}`] });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const id = res.json.data[0].task_id;
    const done = await ended(id, account.auth);
    expect(done.status).toBe('completed');
    const row = await t.ctx.db.selectFrom('tasks').select('upstream_id').where('id', '=', id).executeTakeFirstOrThrow();
    const sent = video.tasks.get(row.upstream_id!)!.body;
    expect(sent.content).toContainEqual({ type: 'image_url', image_url: { url: `asset://${passedAsset.theirs}` }, role: 'reference_image' });
    expect(assets.assets.has(passedAsset.theirs)).toBe(true);
    expect(JSON.stringify(sent)).not.toContain(passedAsset.ours);
  });

  // Last: a refused signature marks the channel as needing attention.
  it('a bad signature is refused by the library: the task fails, is refunded, names no secret, and the channel needs attention', async () => {
    const patch = await t.app.inject({ method: 'PATCH', url: `/admin/channels/${channelId}`, headers: adminHeaders, payload: { options: { secret_access_key: 'not-the-secret' } } });
    expect(patch.statusCode, patch.body).toBe(200);
    const account = await seedAccount(t.ctx, 1);
    const before = assets.calls.length;
    const submit = await call('POST', '/v1/seedance2/private-avatar', account.auth, { group: { name: 'refused' }, ...asset('x') });
    expect(submit.status).toBe(200);
    const record = await ended(submit.json.data.id, account.auth);
    expect(record).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    expect(record.error.message).toContain('SignatureDoesNotMatch');
    expect(record.error.message).not.toContain('not-the-secret');
    expect(record.cost ?? 0).toBe(0);
    expect((await call('GET', '/v1/user/balance', account.auth)).json.remain_balance).toBeCloseTo(1);
    const calls = assets.calls.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => !c.signed)).toBe(true);
    expect([...assets.groups.values()].map((g) => g.Name)).not.toContain('refused');
    const channels = await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders });
    const mine = (channels.json().data as any[]).find((c) => c.id === channelId);
    expect(mine.health).toMatchObject({ needs_attention: true });
    expect(JSON.stringify(mine.health)).not.toContain('not-the-secret');
    const rows = await t.ctx.db.selectFrom('assets').select('status').where('task_id', '=', submit.json.data.id).execute();
    expect(rows.map((r) => r.status)).toEqual(['Failed']);
  });
});
