import { GoogleGenerativeAI } from '@google/generative-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonFieldNames } from '../src/formats/gemini/field-names.ts';
import { adminHeaders, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startFakeGeminiText, type FakeGeminiText } from './support/fake-gemini-text.ts';

// The Gemini surfaces read a body by the protobuf JSON mapping, as the Gemini API does: every field
// by its JSON name or its proto (snake_case) name, the caller's own values (function arguments and
// results, a Schema's property names, JSON Schemas) untouched. countTokens takes `contents` or a
// whole generateContent body in `generateContentRequest`, as @google/generative-ai sends it.
// textgen-2.5-pro goes to a strict fake of the Gemini API (camelCase only: what it receives is what
// the gateway read); textgen-2.5-flash stays on the simulator.

let t: TestApp;
let base: string;
let fake: FakeGeminiText;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  fake = await startFakeGeminiText();
  const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'gemini-text', type: 'gemini', base_url: fake.url, secret: fake.key, models: ['textgen-2.5-pro'], model_mapping: { 'textgen-2.5-pro': 'gemini-fake-flash' }, priority: 10 } });
  expect(res.statusCode, res.body).toBe(201);
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => m !== 'textgen-2.5-pro') } });
  key = (await seedAccount(t.ctx, 1)).key;
});
afterAll(async () => {
  await fake?.close();
  await t.close();
});

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, headers: { 'x-goog-api-key': key }, payload: payload as object });
const gemini = (model: string, method: string) => `/gemini/v1beta/models/${model}:${method}`;
const hello = [{ role: 'user', parts: [{ text: 'Hello there' }] }];
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('jsonFieldNames', () => {
  it('renames message fields only; arguments, results, property names and JSON Schemas stay as they came', () => {
    const body = {
      contents: [
        { role: 'model', parts: [{ function_call: { name: 'get_weather', args: { city_name: 'Lyon', inline_data: 1 } }, thought_signature: 'c2ln' }] },
        { role: 'user', parts: [{ function_response: { name: 'get_weather', response: { max_output_tokens: 2 } } }] },
      ],
      tools: [{ function_declarations: [
        { name: 'get_weather', parameters: { type: 'OBJECT', properties: { city_name: { type: 'STRING', max_length: 40 }, any_of: { type: 'STRING' } }, property_ordering: ['city_name'] } },
        { name: 'raw', parameters_json_schema: { type: 'object', properties: { max_items: { type: 'string' } }, additional_properties: false } },
      ] }],
      tool_config: { function_calling_config: { mode: 'ANY', allowed_function_names: ['get_weather'] } },
      generation_config: { max_output_tokens: 3, response_json_schema: { type: 'object', min_properties: 1 }, thinking_config: { thinking_budget: 0 } },
    };
    const before = structuredClone(body);
    expect(jsonFieldNames(body)).toEqual({
      contents: [
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city_name: 'Lyon', inline_data: 1 } }, thoughtSignature: 'c2ln' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { max_output_tokens: 2 } } }] },
      ],
      tools: [{ functionDeclarations: [
        { name: 'get_weather', parameters: { type: 'OBJECT', properties: { city_name: { type: 'STRING', maxLength: 40 }, any_of: { type: 'STRING' } }, propertyOrdering: ['city_name'] } },
        { name: 'raw', parametersJsonSchema: { type: 'object', properties: { max_items: { type: 'string' } }, additional_properties: false } },
      ] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: { maxOutputTokens: 3, responseJsonSchema: { type: 'object', min_properties: 1 }, thinkingConfig: { thinkingBudget: 0 } },
    });
    expect(body).toEqual(before);
  });

  it('a body with nothing to rename is the same object, and so is each untouched part of a renamed one', () => {
    const body = { contents: [{ parts: [{ text: 'a_b' }, { functionCall: { name: 'f_g', args: { x_y: 1 } } }] }], generationConfig: { maxOutputTokens: 5 } };
    expect(jsonFieldNames(body)).toBe(body);
    const mixed = { contents: body.contents, generation_config: { temperature: 1 } };
    expect((jsonFieldNames(mixed) as any).contents).toBe(body.contents);
  });
});

describe(`snake_case proto field names on the Gemini surfaces [${backendName}]`, () => {
  it('system_instruction, generation_config.max_output_tokens and inline_data are read on the simulator', async () => {
    const plain = await post(gemini('textgen-2.5-flash', 'generateContent'), { contents: hello });
    const told = await post(gemini('textgen-2.5-flash', 'generateContent'), { system_instruction: { parts: [{ text: 'You are a cat.' }] }, contents: hello });
    expect(told.statusCode, told.body).toBe(200);
    expect(told.json().usageMetadata.promptTokenCount).toBeGreaterThan(plain.json().usageMetadata.promptTokenCount);
    const capped = await post(gemini('textgen-2.5-flash', 'generateContent'), { contents: hello, generation_config: { max_output_tokens: 3 } });
    expect(capped.json().candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(capped.json().usageMetadata.candidatesTokenCount).toBeLessThanOrEqual(3);
    const image = { contents: [{ parts: [{ inline_data: { mime_type: 'image/png', data: PNG } }, { text: 'Caption' }] }] };
    expect((await post(gemini('textgen-2.5-flash', 'generateContent'), image)).statusCode).toBe(200);
    // Our own /v1beta surface reads the same names (its answers wrapped).
    const wrapped = await t.app.inject({ method: 'POST', url: '/v1beta/models/textgen-2.5-flash:generateContent', headers: { 'x-goog-api-key': key }, payload: { ...image, generation_config: { max_output_tokens: 3 } } });
    expect(wrapped.json().data.candidates[0].finishReason).toBe('MAX_TOKENS');
  });

  it('a Gemini upstream receives the JSON names, function arguments and property names as they came', async () => {
    const res = await post(gemini('textgen-2.5-pro', 'generateContent'), {
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Lyon?' }] },
        { role: 'model', parts: [{ function_call: { name: 'get_weather', args: { city_name: 'Lyon' } } }] },
        { role: 'user', parts: [{ function_response: { name: 'get_weather', response: { temp_c: 21 } } }] },
      ],
      tools: [{ function_declarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city_name: { type: 'STRING' } }, required: ['city_name'] } }] }],
      tool_config: { function_calling_config: { mode: 'AUTO', allowed_function_names: ['get_weather'] } },
      generation_config: { max_output_tokens: 30 },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.requests.at(-1)!.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Lyon?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city_name: 'Lyon' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city_name: { type: 'STRING' } }, required: ['city_name'] } }] }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO', allowedFunctionNames: ['get_weather'] } },
      generationConfig: { maxOutputTokens: 30 },
    });
  });

  it('both spellings of one field: a 400 naming them, in the native envelope', async () => {
    const res = await post(gemini('textgen-2.5-flash', 'streamGenerateContent?alt=sse'), { contents: hello, generationConfig: { maxOutputTokens: 5 }, generation_config: { max_output_tokens: 9 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('generation_config and generationConfig') });
  });
});

describe(`countTokens with generateContentRequest [${backendName}]`, () => {
  const count = async (url: string, payload: unknown) => {
    const res = await post(url, payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('counts the whole body (its systemInstruction too) on /gemini and /v1beta; snake_case too', async () => {
    const url = gemini('textgen-2.5-flash', 'countTokens');
    const contentsOnly = (await count(url, { contents: hello })).totalTokens;
    expect((await count(url, { generateContentRequest: { model: 'models/textgen-2.5-flash', contents: hello } })).totalTokens).toBe(contentsOnly);
    const system = { parts: [{ text: 'You are a cat who answers every question with a long story.' }] };
    const withSystem = (await count(url, { generateContentRequest: { model: 'models/textgen-2.5-flash', contents: hello, systemInstruction: system } })).totalTokens;
    expect(withSystem).toBeGreaterThan(contentsOnly);
    expect((await count(url, { generate_content_request: { contents: hello, system_instruction: system } })).totalTokens).toBe(withSystem);
    expect(await count('/v1beta/models/textgen-2.5-flash:countTokens', { generateContentRequest: { contents: hello, systemInstruction: system } })).toEqual({ code: 200, data: { totalTokens: withSystem } });
  });

  it('tools and tool turns are counted; a Gemini upstream is asked with the same generateContentRequest', async () => {
    const tools = [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }];
    const url = gemini('textgen-2.5-flash', 'countTokens');
    const bare = (await count(url, { generateContentRequest: { contents: hello } })).totalTokens;
    expect((await count(url, { generateContentRequest: { contents: hello, tools } })).totalTokens).toBeGreaterThan(bare);
    expect((await count(gemini('textgen-2.5-pro', 'countTokens'), { generate_content_request: { model: 'models/textgen-2.5-pro', contents: hello, tools } })).totalTokens).toBe(77);
    expect(fake.requests.at(-1)!.body).toEqual({ generateContentRequest: { model: 'models/gemini-fake-flash', contents: hello, tools } });
  });

  it('both forms, or neither: a 400 naming the fields', async () => {
    const both = await post(gemini('textgen-2.5-flash', 'countTokens'), { contents: hello, generateContentRequest: { contents: hello } });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.message).toBe('countTokens takes contents or generateContentRequest, not both');
    const neither = await post('/v1beta/models/textgen-2.5-flash:countTokens', {});
    expect(neither.statusCode).toBe(400);
    expect(neither.json().error.message).toBe('countTokens needs contents or generateContentRequest');
    const inner = await post(gemini('textgen-2.5-flash', 'countTokens'), { generateContentRequest: { model: 'models/textgen-2.5-flash' } });
    expect(inner.statusCode).toBe(400);
    expect(inner.json().error.message).toContain('contents');
    const generate = await post(gemini('textgen-2.5-flash', 'generateContent'), { generateContentRequest: { contents: hello } });
    expect(generate.statusCode).toBe(400);
    expect(generate.json().error.message).toContain("required property 'contents'");
  });

  it("@google/generative-ai's countTokens (what LangChain's ChatGoogleGenerativeAI uses) against a real port", async () => {
    const sdk = new GoogleGenerativeAI(key);
    const model = sdk.getGenerativeModel({ model: 'textgen-2.5-flash', systemInstruction: 'You are a cat.' }, { baseUrl: `${base}/gemini` });
    const counted = await model.countTokens('hi');
    const plain = await sdk.getGenerativeModel({ model: 'textgen-2.5-flash' }, { baseUrl: `${base}/gemini` }).countTokens('hi');
    expect(plain.totalTokens).toBeGreaterThan(0);
    expect(counted.totalTokens).toBeGreaterThan(plain.totalTokens);
  });
});
