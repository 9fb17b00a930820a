import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoAccount } from '../src/modules/accounts/demo.ts';
import { MODELS, TEXT_MODELS } from '../src/core/catalog/models.ts';
import { backendName, createTestApp, type TestApp } from './harness.ts';

// OpenAPI's "Try it out" with the demo key: every operation an API key may call that takes a
// request body documents an example, and that example, sent as it stands (path parameters from
// their examples) with the demo key, is answered 2xx (but a redemption code's, which is no real
// code). Model fields (and the native path's model) list the models their endpoint serves, as an
// enum, while validation keeps its own answers for an unknown model (404 for text, 400 for images).

let t: TestApp;
let demoKey: string;
let doc: any;
const KEY_SCHEMES = new Set(['bearer', 'apiKey', 'googApiKey']);

beforeAll(async () => {
  t = await createTestApp({ GATEWAY_DEMO: '1' });
  demoKey = (await ensureDemoAccount(t.ctx))!.key;
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await t.close();
});

/** The operations a key may call that take a body: [method, path template, operation]. */
function keyOperationsWithBodies(): [string, string, any][] {
  const found: [string, string, any][] = [];
  for (const [path, operations] of Object.entries<any>(doc.paths)) {
    for (const [method, operation] of Object.entries<any>(operations)) {
      if (!operation.requestBody) continue;
      if (!(operation.security ?? []).some((s: object) => Object.keys(s).some((name) => KEY_SCHEMES.has(name)))) continue;
      found.push([method, path, operation]);
    }
  }
  return found;
}

const exampleOf = (parameter: any) => parameter.example ?? parameter.schema?.examples?.[0] ?? parameter.schema?.enum?.[0];

const headersFor = (operation: any): Record<string, string> => {
  const schemes = operation.security.flatMap((s: object) => Object.keys(s));
  return schemes.includes('bearer') ? { authorization: `Bearer ${demoKey}` } : schemes.includes('apiKey') ? { 'x-api-key': demoKey } : { 'x-goog-api-key': demoKey };
};

describe(`OpenAPI examples [${backendName}]`, () => {
  it('every example of an operation a key may call, sent with the demo key, answers 2xx', async () => {
    const operations = keyOperationsWithBodies();
    expect(operations.map(([method, path]) => `${method} ${path}`)).toEqual(
      expect.arrayContaining([
        'post /v1/images/generations',
        'post /v1/videos/generations',
        'post /v1/messages',
        'post /v1/messages/count_tokens',
        'post /v1/chat/completions',
        'post /v1/responses',
        'post /v1beta/models/{model}:{method}',
        'post /gemini/v1beta/models/{model}:{method}',
        'post /v1/seedance2/private-avatar',
      ]),
    );
    for (const [method, path, operation] of operations) {
      const example = operation.requestBody.content['application/json'].example;
      expect(example, `${path} has an example`).toBeDefined();
      let url = path;
      for (const parameter of (operation.parameters ?? []).filter((p: any) => p.in === 'path')) {
        expect(exampleOf(parameter), `${path}: {${parameter.name}} has an example`).toBeDefined();
        url = url.replace(`{${parameter.name}}`, encodeURIComponent(exampleOf(parameter)));
      }
      const res = await t.app.inject({ method: method.toUpperCase() as 'POST', url, headers: headersFor(operation), payload: example });
      // A redemption code is a secret the document cannot hold: its example redeems nothing.
      if (path === '/v1/redeem') expect(`${method} ${url} -> ${res.statusCode}`).toBe('post /v1/redeem -> 404');
      else expect(`${method} ${url} -> ${res.statusCode}`).toMatch(/ -> 2\d\d$/);
    }
  });

  it('model fields are enums of the models each endpoint serves, and the example model is one of them', async () => {
    const images = MODELS.filter((m) => m.kind === 'image').map((m) => m.id);
    const videos = MODELS.filter((m) => m.kind === 'video').map((m) => m.id);
    const expected: Record<string, string[]> = {
      '/v1/images/generations': images,
      '/v1/videos/generations': videos,
      '/v1/messages': TEXT_MODELS,
      '/v1/messages/count_tokens': TEXT_MODELS,
      '/v1/chat/completions': TEXT_MODELS,
      '/v1/responses': TEXT_MODELS,
    };
    for (const [path, models] of Object.entries(expected)) {
      const media = doc.paths[path].post.requestBody.content['application/json'];
      expect(media.schema.properties.model.enum, path).toEqual(models);
      expect(models).toContain(media.example.model);
    }
    for (const path of ['/v1beta/models/{model}:{method}', '/gemini/v1beta/models/{model}:{method}']) {
      const parameters = doc.paths[path].post.parameters.filter((p: any) => p.in === 'path');
      expect(parameters.find((p: any) => p.name === 'model').schema.enum, path).toEqual(TEXT_MODELS);
      expect(parameters.find((p: any) => p.name === 'method').schema.enum, path).toEqual(['generateContent', 'streamGenerateContent', 'countTokens']);
    }
  });

  it('validation still answers an unknown model as before: 404 for text (the native envelope), 400 for an image model', async () => {
    const native = await t.app.inject({ method: 'POST', url: '/v1beta/models/no-such-model:generateContent', headers: { authorization: `Bearer ${demoKey}` }, payload: { contents: [{ parts: [{ text: 'hi' }] }] } });
    expect(native.statusCode).toBe(404);
    expect(native.json().error.status).toBe('NOT_FOUND');
    const messages = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': demoKey }, payload: { model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    expect(messages.statusCode).toBe(404);
    const image = await t.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${demoKey}` }, payload: { model: 'no-such-model', prompt: 'x' } });
    expect(image.statusCode).toBe(400);
  });
});
