import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { CHANNEL_TYPES } from '../src/providers/registry.ts';
import { ADMIN_TOKEN, adminHeaders, backendName, createTestApp, type TestApp } from './harness.ts';
import { haveChromium, launchChromium } from './support/browser.ts';
import { startFakeChatUpstream, type FakeChatUpstream } from './support/fake-chat-upstream.ts';
import { freePort } from './support/gateway-process.ts';

// One registry of channel types: validation, the connection test, the OpenAPI document, the CLI
// help and the console's channel form all read it. The types of today must all be in it.

const ROOT = path.resolve(import.meta.dirname, '..');
const UPSTREAM_SECRET = 'sk-upstream-registry';
const HEADER_SECRET = 'proxy-secret-never-shown';
const names = CHANNEL_TYPES.map((entry) => entry.type);

let t: TestApp;
let upstream: FakeChatUpstream;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
  upstream = await startFakeChatUpstream(UPSTREAM_SECRET);
});
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => t.app.inject({ method, url, headers: adminHeaders, payload });
const chatChannel = (options: object) =>
  admin('POST', '/admin/channels', { name: 'chat', type: 'chat-completions', base_url: upstream.url, secret: UPSTREAM_SECRET, models: ['upstream-model'], priority: -5, options });

describe(`channel types come from one registry [${backendName}]`, () => {
  it('holds the types of today, each with what it serves, a closed options schema and a connection test', () => {
    expect(names).toEqual(expect.arrayContaining(['simulator', 'relay', 'chat-completions', 'messages', 'native']));
    for (const entry of CHANNEL_TYPES) {
      expect(entry.serves.length, entry.type).toBeGreaterThan(0);
      expect((entry.options as { additionalProperties?: unknown }).additionalProperties, entry.type).toBe(false);
      expect(typeof entry.test, entry.type).toBe('function');
      expect(Boolean(entry.taskProvider || entry.textProvider), entry.type).toBe(true);
    }
  });

  it('an unknown type is a 400 listing every known type', async () => {
    for (const method of ['POST', 'PATCH'] as const) {
      const simulator = (await admin('GET', '/admin/channels')).json().data[0];
      const res =
        method === 'POST' ? await admin('POST', '/admin/channels', { name: 'x', type: 'ftp', models: ['m'] }) : await admin('PATCH', `/admin/channels/${simulator.id}`, { type: 'ftp' });
      expect(res.statusCode, method).toBe(400);
      expect(res.json().error.code).toBe(400);
      for (const name of names) expect(res.json().error.message, method).toContain(name);
    }
  });

  it("options are checked by the type's own schema: a 400 names the field", async () => {
    const cases: [object, string][] = [
      [{ name: 'x', type: 'chat-completions', base_url: upstream.url, models: ['m'], options: { organization: 5 } }, 'options.organization'],
      [{ name: 'x', type: 'chat-completions', base_url: upstream.url, models: ['m'], options: { nope: 'x' } }, 'options.nope'],
      [{ name: 'x', type: 'chat-completions', base_url: upstream.url, models: ['m'], options: { headers: { 'bad header': 'x' } } }, 'options.headers'],
      // The simulator takes no options at all; another type's field is unknown to it.
      [{ name: 'x', type: 'simulator', models: ['m'], options: { organization: 'org-1' } }, 'options.organization'],
    ];
    for (const [body, field] of cases) {
      const res = await admin('POST', '/admin/channels', body);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().error.message, field).toContain(field);
    }
    const listed = (await admin('GET', '/admin/channels')).json().data;
    expect(listed.filter((c: any) => c.name === 'x')).toEqual([]);
  });

  it('a base_url with user info, a query or a fragment is a 400 naming base_url: credentials go in secret or options.headers', async () => {
    const base = { name: 'u', type: 'openai', secret: 'sk-x', models: ['imggen-2'] };
    for (const base_url of ['https://user:hunter2-secret@up.example', 'https://up.example/v1?key=abc', 'https://up.example/#x']) {
      const res = await admin('POST', '/admin/channels', { ...base, base_url });
      expect(res.statusCode, base_url).toBe(400);
      expect(res.json().error.message).toContain('base_url');
    }
    const made = await admin('POST', '/admin/channels', { ...base, base_url: 'https://up.example/prefix' });
    expect(made.statusCode, made.body).toBe(201);
    expect((await admin('PATCH', `/admin/channels/${made.json().id}`, { base_url: 'https://user:hunter2-secret@up.example' })).statusCode).toBe(400);
    expect((await admin('GET', '/admin/channels')).body).not.toContain('hunter2-secret');
    expect((await admin('DELETE', `/admin/channels/${made.json().id}`)).statusCode).toBe(200);
  });

  it('secrets inside options are stored and used, never shown back; a PATCH merges options', async () => {
    const created = await chatChannel({ organization: 'org-1', headers: { 'cf-access-client-secret': HEADER_SECRET } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    expect(created.json().options).toEqual({ organization: 'org-1', has_headers: true });
    expect(created.body).not.toContain(HEADER_SECRET);
    const listed = await admin('GET', '/admin/channels');
    expect(listed.body).not.toContain(HEADER_SECRET);
    expect(listed.json().data.find((c: any) => c.id === id).options).toEqual({ organization: 'org-1', has_headers: true });

    // The type's connection test goes through its text provider, options and all.
    const tested = await admin('POST', `/admin/channels/${id}/test`);
    expect(tested.json(), tested.body).toMatchObject({ ok: true });
    const seen = upstream.requests.at(-1)!.headers;
    expect([seen['openai-organization'], seen['cf-access-client-secret']]).toEqual(['org-1', HEADER_SECRET]);

    // A field left out keeps its value (the console cannot send back a secret it never saw); null clears it.
    const changed = await admin('PATCH', `/admin/channels/${id}`, { options: { organization: 'org-2' } });
    expect(changed.json().options).toEqual({ organization: 'org-2', has_headers: true });
    await admin('POST', `/admin/channels/${id}/test`);
    expect(upstream.requests.at(-1)!.headers['cf-access-client-secret']).toBe(HEADER_SECRET);
    const cleared = await admin('PATCH', `/admin/channels/${id}`, { options: { headers: null } });
    expect(cleared.json().options).toEqual({ organization: 'org-2' });
    await admin('POST', `/admin/channels/${id}/test`);
    expect(upstream.requests.at(-1)!.headers['cf-access-client-secret']).toBeUndefined();
    // A type change starts from no options: the old type's settings do not carry over.
    expect((await admin('PATCH', `/admin/channels/${id}`, { type: 'native' })).json().options).toEqual({});
    await admin('DELETE', `/admin/channels/${id}`);
  });

  it('GET /admin/channel-types describes every type of the registry; secrets are marked writeOnly', async () => {
    const res = await admin('GET', '/admin/channel-types');
    expect(res.statusCode).toBe(200);
    const types = res.json().data;
    expect(types.map((e: any) => e.type)).toEqual(names);
    const chat = types.find((e: any) => e.type === 'chat-completions');
    expect(chat).toMatchObject({ serves: ['text'], base_url: 'required' });
    expect(Object.keys(chat.options.properties)).toEqual(expect.arrayContaining(['organization', 'project', 'headers']));
    expect(chat.options.properties.headers.writeOnly).toBe(true);
    expect(types.find((e: any) => e.type === 'simulator')).toMatchObject({ base_url: 'none', serves: ['text', 'image', 'video', 'avatar'] });
  });

  it("the OpenAPI document lists the registry's types and each type's options", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const body = doc.paths['/admin/channels'].post.requestBody.content['application/json'].schema;
    expect(body.properties.type.enum).toEqual(names);
    for (const entry of CHANNEL_TYPES) {
      expect(body.properties.options.description).toContain(entry.type);
      for (const field of Object.keys(entry.options.properties)) expect(body.properties.options.description).toContain(field);
    }
    expect(doc.paths['/admin/channel-types'].get).toBeDefined();
  });

  it('the CLI help lists every type and its options; channels create takes --options and shows no secret', async () => {
    const help = await cli('--help');
    for (const entry of CHANNEL_TYPES) {
      expect(help.stdout).toContain(entry.type);
      for (const field of Object.keys(entry.options.properties)) expect(help.stdout).toContain(field);
    }
    const env = t.database.env;
    const created = await cli('channels', 'create', '--name', 'cli', '--type', 'chat-completions', '--base-url', upstream.url, '--models', 'm', '--options', JSON.stringify({ project: 'p-1', headers: { 'x-proxy-key': HEADER_SECRET } }), { env });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).options).toEqual({ project: 'p-1', has_headers: true });
    expect(created.stdout).not.toContain(HEADER_SECRET);
    const refused = await cli('channels', 'create', '--name', 'cli', '--type', 'messages', '--base-url', upstream.url, '--models', 'm', '--options', '{"project":"p"}', { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('options.project');
  }, 60_000);
});

function cli(...args: (string | { env: Record<string, string> })[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const last = args.at(-1);
  const env = typeof last === 'object' ? last.env : {};
  const words = args.filter((a): a is string => typeof a === 'string');
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/gateway.js', ...words], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as any).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const consoleBuilt = fs.existsSync(path.resolve(loadConfig({}).console.distDir, 'index.html'));

describe.skipIf(!haveChromium || !consoleBuilt)(`the console's channel form offers each type's fields [${backendName}]`, () => {
  it("switching the type shows that type's options; a secret option is sent once and never shown again", async () => {
    const port = await freePort();
    await t.app.listen({ port, host: '127.0.0.1' });
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ baseURL: `http://localhost:${port}` })).newPage();
      await page.goto('/console/');
      await page.getByRole('tab', { name: 'Operator' }).click();
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Totals' }).waitFor();
      await page.goto('/console/#/channels');
      const form = page.locator('form.grid-form');
      const type = form.getByLabel('Type');
      // Every registry type is offered, and each one's own fields appear when it is chosen.
      // The form fills its types once the registry's answer came: polled, not read once (failed once in CI under load).
      await expect.poll(() => type.locator('option').allTextContents(), { timeout: 10_000 }).toEqual(names);
      for (const entry of CHANNEL_TYPES) {
        await type.selectOption(entry.type);
        for (const field of Object.keys(entry.options.properties)) await form.getByTestId(`option-${field}`).waitFor();
        expect(await form.locator('[data-testid^="option-"]').count(), entry.type).toBe(Object.keys(entry.options.properties).length);
      }
      await type.selectOption('chat-completions');
      await form.getByLabel('Name').fill('from-the-form');
      await form.getByLabel('Base URL').fill(upstream.url);
      await form.getByLabel('Secret', { exact: true }).fill(UPSTREAM_SECRET);
      await form.getByLabel('Models (comma separated, * for all)').fill('upstream-model');
      await form.getByLabel('Priority').fill('-5');
      await form.getByTestId('option-organization').locator('input, textarea').fill('org-form');
      await form.getByTestId('option-headers').locator('input, textarea').fill(JSON.stringify({ 'x-proxy-key': HEADER_SECRET }));
      await form.getByRole('button', { name: 'Add channel' }).click();
      await page.getByRole('cell', { name: 'from-the-form' }).waitFor();

      const stored = (await admin('GET', '/admin/channels')).json().data.find((c: any) => c.name === 'from-the-form');
      expect(stored.options).toEqual({ organization: 'org-form', has_headers: true });
      // Editing shows the plain option and only that the secret one is set.
      await page.getByRole('row', { name: /from-the-form/ }).getByRole('button', { name: 'Edit' }).click();
      expect(await form.getByTestId('option-organization').locator('input').inputValue()).toBe('org-form');
      expect(await form.getByTestId('option-headers').locator('input, textarea').inputValue()).toBe('');
      expect(await page.content()).not.toContain(HEADER_SECRET);
      await page.getByRole('row', { name: /from-the-form/ }).getByRole('button', { name: 'Test' }).click();
      await page.getByText(/^OK in \d+ ms/).waitFor();
      expect(upstream.requests.at(-1)!.headers['x-proxy-key']).toBe(HEADER_SECRET);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
