import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { BodyCapture } from '../src/modules/calls/call-bodies.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Opt-in body capture: a key with log_bodies has each logged call's request and answer stored in
// the result store, redacted of its own key string and of credential-like fields, readable by the
// operator and the account's holder only, deleted with the call log row; a key without it stores
// nothing, and a result store that fails never fails the call.

const PASSWORD = 'correct horse battery';
const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bodies-'));
let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ FILES_DIR: filesDir });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(filesDir, { recursive: true, force: true });
});

/** An account whose key logs bodies (set by the operator at creation), and a console session on it. */
async function account(app: TestApp = t, logBodies = true) {
  const seeded = await seedAccount(app.ctx, 5);
  const created = await app.app.inject({ method: 'POST', url: '/admin/keys', headers: adminHeaders, payload: { user_id: seeded.user.id, unlimited: true, log_bodies: logBodies } });
  expect(created.statusCode, created.body).toBe(201);
  expect(created.json().log_bodies).toBe(logBodies);
  const key = created.json().key as string;
  const email = `${seeded.user.id.toLowerCase()}@example.com`;
  const put = await app.app.inject({ method: 'PUT', url: `/admin/users/${seeded.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(put.statusCode, put.body).toBe(200);
  const session = await app.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password: PASSWORD } });
  return { userId: seeded.user.id, keyId: created.json().id as string, key, cookie: String(session.headers['set-cookie']).split(';')[0]!, csrf: session.json().csrf_token as string };
}

const say = (text: string, extra: object = {}) => ({ model: 'chatgen-4-haiku', max_tokens: 200, messages: [{ role: 'user', content: text }], ...extra });
const json = { 'content-type': 'application/json' };

/** The call's row, once written (after the response closed and the bodies were stored). */
async function row(app: TestApp, id: string) {
  for (let i = 0; i < 100; i++) {
    await app.ctx.callLog.bodies.drain();
    await app.ctx.callLog.flush();
    const found = await app.ctx.db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirst();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no call log row ${id}`);
}

/** The stored object's bytes, read from the result store itself. */
async function storedBytes(app: TestApp, id: string): Promise<string> {
  const key = (await row(app, id)).bodies;
  expect(key, `bodies of ${id}`).toBeTypeOf('string');
  const found = await app.ctx.files.store.get(key!);
  expect(found).toBeDefined();
  const parts: Buffer[] = [];
  for await (const part of found!.body) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const adminBodies = (id: string, app = t) => app.app.inject({ method: 'GET', url: `/admin/calls/${id}/bodies`, headers: adminHeaders });
const holderBodies = (id: string, cookie: string) => t.app.inject({ method: 'GET', url: `/console/api/calls/${id}/bodies`, headers: { cookie } });

/** Neither the key nor the part of it past its shown prefix, nor a credential field's value, is in the bytes. */
function expectNoSecrets(bytes: string, key: string, ...values: string[]) {
  expect(bytes).not.toContain(key);
  expect(bytes).not.toContain(key.slice(0, 16));
  for (const value of values) expect(bytes).not.toContain(value);
}

describe('body capture', () => {
  /** A response that only takes bytes, as a socket would. */
  const sink = () => ({ write: () => true, end() { return this; } }) as unknown as ServerResponse;

  it('redacts credential fields written in an answer, and a key the cut would split', () => {
    const secret = 'sk-gw-abcdefghijklmnopqrstuvwxyz0123456789';
    const capture = new BodyCapture({ model: 'm', nested: [{ Authorization: 'Bearer x', refresh_token: 'r', max_tokens: 5 }], file: Buffer.alloc(3) }, secret, 200);
    const raw = sink();
    capture.tap(raw);
    raw.write('data: {"api_key":"v1","access_token": "v2","x-goog-api-key":"v3","n":1}\n\n');
    raw.write(Buffer.from(`data: ${'x'.repeat(70)}${secret}${'y'.repeat(100)}\n\n`));
    raw.end();
    const stored = capture.finish();
    expect(JSON.parse(stored.request)).toEqual({ model: 'm', nested: [{ Authorization: '[redacted]', refresh_token: '[redacted]', max_tokens: 5 }], file: '[3 bytes]' });
    expect(stored.truncated).toEqual({ request: false, response: true });
    expect(stored.response.startsWith('data: {"api_key":"[redacted]","access_token": "[redacted]","x-goog-api-key":"[redacted]"')).toBe(true);
    expect(Buffer.byteLength(stored.response)).toBeLessThanOrEqual(200);
    for (const value of ['v1', 'v2', 'v3', secret.slice(0, 16)]) expect(stored.response).not.toContain(value);
  });
});

describe(`call bodies [${backendName}]`, () => {
  it('a text call and a task submit: bodies stored redacted, read by the operator and the holder, 404 to another holder', async () => {
    const a = await account();
    const b = await account();
    // The key in the prompt (the simulator echoes it back), and credential-like fields in a body.
    const text = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say(`my key is ${a.key} keep it`) });
    expect(text.statusCode, text.body).toBe(200);
    expect(text.body).toContain(a.key);
    const textId = String(text.headers['x-request-id']);
    const fields = await t.app.inject({
      method: 'POST', url: '/v1/chat/completions', headers: { ...json, authorization: `Bearer ${a.key}` },
      payload: { ...say('hi'), authorization: 'Bearer tok-AUTH-1', 'x-api-key': 'tok-XAPI-2', metadata: { api_key: 'tok-META-3', 'x-goog-api-key': 'tok-GOOG-4', client_secret: 'tok-SECRET-5' } },
    });
    const fieldsId = String(fields.headers['x-request-id']);
    const submit = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { ...json, authorization: `Bearer ${a.key}` }, payload: { prompt: `a lighthouse ${a.key}` } });
    expect(submit.statusCode, submit.body).toBe(200);
    const submitId = String(submit.headers['x-request-id']);

    for (const id of [textId, fieldsId, submitId]) expectNoSecrets(await storedBytes(t, id), a.key, 'tok-AUTH-1', 'tok-XAPI-2', 'tok-META-3', 'tok-GOOG-4', 'tok-SECRET-5');

    const operator = await adminBodies(textId);
    expect(operator.statusCode, operator.body).toBe(200);
    const bodies = operator.json();
    expect(bodies.truncated).toBe(false);
    expect(bodies.request).toEqual(say('my key is [redacted] keep it'));
    expect(bodies.response).toEqual({ ...text.json(), content: [{ ...text.json().content[0], text: text.json().content[0].text.replace(a.key, '[redacted]') }] });
    const call = (await t.app.inject({ method: 'GET', url: `/admin/calls/${textId}`, headers: adminHeaders })).json();
    expect(call.bodies).toBe(true);

    const redacted = (await adminBodies(fieldsId)).json();
    expect(redacted.request).toMatchObject({ authorization: '[redacted]', 'x-api-key': '[redacted]', metadata: { api_key: '[redacted]', 'x-goog-api-key': '[redacted]', client_secret: '[redacted]' } });
    expect(redacted.response).toEqual(fields.json());

    const receipt = (await adminBodies(submitId)).json();
    expect(receipt.request).toEqual({ prompt: 'a lighthouse [redacted]' });
    expect(receipt.response).toEqual(submit.json());

    // The holder reads their own; another account's holder gets a 404, as for the call itself.
    const mine = await holderBodies(textId, a.cookie);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json()).toEqual(bodies);
    expect((await t.app.inject({ method: 'GET', url: `/console/api/calls/${textId}`, headers: { cookie: a.cookie } })).json().bodies).toBe(true);
    expect((await holderBodies(textId, b.cookie)).statusCode).toBe(404);
    expect((await holderBodies(submitId, b.cookie)).statusCode).toBe(404);
    expect((await adminBodies('no-such-call')).statusCode).toBe(404);
  });

  it('streams through a real port: the events as sent are stored, without the key', async () => {
    const a = await account();
    const chat = await request(`${base}/v1/chat/completions`, { method: 'POST', headers: { ...json, authorization: `Bearer ${a.key}` }, body: JSON.stringify(say(`stream ${a.key}`, { stream: true })) });
    const chatText = await chat.body.text();
    expect(chat.statusCode).toBe(200);
    const messages = await request(`${base}/v1/messages`, { method: 'POST', headers: { ...json, 'x-api-key': a.key }, body: JSON.stringify(say('stream this', { stream: true })) });
    const messagesText = await messages.body.text();
    const gemini = await request(`${base}/gemini/v1beta/models/textgen-2.5-flash:streamGenerateContent?alt=sse`, {
      method: 'POST', headers: { ...json, 'x-goog-api-key': a.key }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    const geminiText = await gemini.body.text();
    expect(gemini.statusCode, geminiText).toBe(200);

    for (const [res, sent] of [[chat, chatText], [messages, messagesText], [gemini, geminiText]] as const) {
      const id = String(res.headers['x-request-id']);
      expectNoSecrets(await storedBytes(t, id), a.key);
      const stored = (await adminBodies(id)).json();
      expect(stored.truncated).toBe(false);
      expect(typeof stored.response).toBe('string');
      expect(stored.response).toContain('data: ');
      // The stream as the caller read it, but for the key's redaction.
      expect(stored.response).toBe(sent.split(a.key).join('[redacted]'));
    }
    const chatStored = (await adminBodies(String(chat.headers['x-request-id']))).json();
    expect(chatStored.request).toEqual(say('stream [redacted]', { stream: true }));
  });

  it('a key without log_bodies stores nothing; the holder turns it on and off from the console', async () => {
    const a = await account(t, false);
    const before = fs.readdirSync(filesDir).filter((f) => f.includes('-call-')).length;
    const plain = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say('nothing kept') });
    expect(plain.statusCode).toBe(200);
    const plainId = String(plain.headers['x-request-id']);
    expect((await row(t, plainId)).bodies).toBeNull();
    expect((await t.app.inject({ method: 'GET', url: `/admin/calls/${plainId}`, headers: adminHeaders })).json().bodies).toBe(false);
    expect((await adminBodies(plainId)).statusCode).toBe(404);
    expect((await holderBodies(plainId, a.cookie)).statusCode).toBe(404);
    expect(fs.readdirSync(filesDir).filter((f) => f.includes('-call-')).length).toBe(before);

    const on = await t.app.inject({ method: 'PATCH', url: `/console/api/keys/${a.keyId}`, headers: { cookie: a.cookie, 'x-csrf-token': a.csrf }, payload: { log_bodies: true } });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().log_bodies).toBe(true);
    const listed = (await t.app.inject({ method: 'GET', url: '/console/api/keys', headers: { cookie: a.cookie } })).json().data;
    expect(listed.find((k: { id: string }) => k.id === a.keyId).log_bodies).toBe(true);
    const kept = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say('kept now') });
    expect((await holderBodies(String(kept.headers['x-request-id']), a.cookie)).statusCode).toBe(200);

    const off = await t.app.inject({ method: 'PATCH', url: `/admin/keys/${a.keyId}`, headers: adminHeaders, payload: { log_bodies: false } });
    expect(off.json().log_bodies).toBe(false);
    const admins = (await t.app.inject({ method: 'GET', url: `/admin/keys?user_id=${a.userId}`, headers: adminHeaders })).json().data;
    expect(admins.find((k: { id: string }) => k.id === a.keyId).log_bodies).toBe(false);
    const again = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say('not kept') });
    expect((await row(t, String(again.headers['x-request-id']))).bodies).toBeNull();

    // A holder's new key may log bodies; only documented fields are taken.
    const created = await t.app.inject({ method: 'POST', url: '/console/api/keys', headers: { cookie: a.cookie, 'x-csrf-token': a.csrf }, payload: { name: 'logged', unlimited: true, log_bodies: true } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().log_bodies).toBe(true);
    const wrong = await t.app.inject({ method: 'PATCH', url: `/console/api/keys/${a.keyId}`, headers: { cookie: a.cookie, 'x-csrf-token': a.csrf }, payload: { log_bodies: 'yes' } });
    expect(wrong.statusCode).toBe(400);
  });

  it('bodies are cut at CALL_BODY_MAX_BYTES and marked truncated', async () => {
    const small = await createTestApp({ FILES_DIR: filesDir, CALL_BODY_MAX_BYTES: '1024' }, t.database);
    try {
      const a = await account(small);
      const long = `${'many words here '.repeat(200)} ${a.key}`;
      const res = await small.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say(long, { max_tokens: 2000 }) });
      expect(res.statusCode).toBe(200);
      const id = String(res.headers['x-request-id']);
      const bytes = await storedBytes(small, id);
      expectNoSecrets(bytes, a.key);
      const raw = JSON.parse(bytes);
      expect(raw.truncated.request).toBe(true);
      expect(Buffer.byteLength(raw.request)).toBeLessThanOrEqual(1024);
      expect(Buffer.byteLength(raw.response)).toBeLessThanOrEqual(1024);
      const stored = (await adminBodies(id, small)).json();
      expect(stored.truncated).toBe(true);
      // Cut, the request no longer parses: it is answered as text.
      expect(stored.request).toBe(raw.request);
      expect(stored.request.startsWith('{"model":"chatgen-4-haiku"')).toBe(true);
    } finally {
      await small.close();
    }
  }, 90_000);

  it('the sweeper deletes the bodies with their rows, with two processes sweeping at once', async () => {
    const second = await createTestApp({ FILES_DIR: filesDir }, t.database);
    try {
      const a = await account();
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say(`old call ${i}`) });
        ids.push(String(res.headers['x-request-id']));
      }
      const recent = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say('recent call') });
      const recentId = String(recent.headers['x-request-id']);
      const keys = await Promise.all([...ids, recentId].map(async (id) => (await row(t, id)).bodies!));
      for (const key of keys) expect(await t.ctx.files.store.head(key)).toBeDefined();
      await t.ctx.db.updateTable('calls').set({ time: Date.now() - 31 * 86_400_000 }).where('id', 'in', ids).execute();

      await Promise.all([t.ctx.callLog.sweep(), second.ctx.callLog.sweep()]);
      for (const key of keys.slice(0, -1)) expect(await t.ctx.files.store.head(key)).toBeUndefined();
      expect(await t.ctx.files.store.head(keys.at(-1)!)).toBeDefined();
      expect((await adminBodies(ids[0]!)).statusCode).toBe(404);
      expect((await adminBodies(recentId)).statusCode).toBe(200);

      // A row whose object went first (removed by hand here) answers 404, not a 500.
      await t.ctx.files.store.delete(keys.at(-1)!);
      expect((await adminBodies(recentId)).statusCode).toBe(404);
    } finally {
      await second.close();
    }
  }, 90_000);

  it('a failing result store does not fail the call: the row is written without bodies, the failure logged', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bodies-gone-'));
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const broken = await createTestApp({ FILES_DIR: dir }, t.database, { logger });
    try {
      const a = await account(broken);
      // The store's directory is gone: every write to it fails.
      fs.rmSync(dir, { recursive: true, force: true });
      const res = await broken.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...json, 'x-api-key': a.key }, payload: say('store is down') });
      expect(res.statusCode, res.body).toBe(200);
      const id = String(res.headers['x-request-id']);
      const written = await row(broken, id);
      expect(written).toMatchObject({ status: 'ok', bodies: null });
      expect((await adminBodies(id, broken)).statusCode).toBe(404);
      const failure = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'call bodies not stored');
      expect(failure).toMatchObject({ call: id, failed: 1 });
    } finally {
      await broken.close();
    }
  }, 90_000);
});
