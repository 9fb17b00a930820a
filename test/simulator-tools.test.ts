import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// A tool round trip on every wire surface, with the official SDKs, on the simulator: the prompt's
// `[sim:tool=NAME {args}]` makes the model call NAME; the tool's result, sent back in the format's
// own shape, comes back quoted in the final answer. Streamed tool calls assemble into the same call.

let t: TestApp;
let base: string;
let key: string;
const MODEL = 'chatgen-4-haiku';
const ASK = 'What is the weather? [sim:tool=get_weather {"city":"Lyon"}]';
const PARAMS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  key = (await seedAccount(t.ctx, 10)).key;
});
afterAll(async () => t?.close());

describe(`tools through every surface on the simulator [${backendName}]`, () => {
  it('chat completions: tool_calls, then a tool message; streamed deltas assemble into the same call', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: PARAMS } }];
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: ASK }], tools });
    const call = first.choices[0]!.message.tool_calls![0]! as { id: string; function: { name: string; arguments: string } };
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Lyon"}' });
    const stream = client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: ASK }], tools });
    const streamed = (await stream.finalChatCompletion()).choices[0]!.message.tool_calls![0]! as typeof call;
    expect(streamed.function).toEqual(call.function);
    const second = await client.chat.completions.create({
      model: MODEL,
      tools,
      messages: [{ role: 'user', content: ASK }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' }],
    });
    expect(second.choices[0]!.message.content).toContain('sunny, 21 C');
  });

  it('responses: a function_call item, then its function_call_output; the stream ends with the same call', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: PARAMS, strict: false }];
    const first = await client.responses.create({ model: MODEL, input: ASK, tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Lyon"}' });
    const stream = client.responses.stream({ model: MODEL, input: ASK, tools });
    const done = await stream.finalResponse();
    expect(done.output.find((item) => item.type === 'function_call')).toMatchObject({ name: 'get_weather', arguments: '{"city":"Lyon"}' });
    const second = await client.responses.create({
      model: MODEL,
      tools,
      input: [{ role: 'user', content: ASK }, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }],
    });
    expect(second.output_text).toContain('sunny, 21 C');
    expect(second.usage!.input_tokens).toBeGreaterThan(0);
  });

  it('messages: a tool_use block, then a tool_result; the stream helper assembles the same input', async () => {
    const client = new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0 });
    const tools = [{ name: 'get_weather', input_schema: PARAMS as Anthropic.Tool.InputSchema }];
    const first = await client.messages.create({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: ASK }], tools });
    const use = first.content.find((b) => b.type === 'tool_use')!;
    expect(first.stop_reason).toBe('tool_use');
    expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Lyon' } });
    const streamed = await client.messages.stream({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: ASK }], tools }).finalMessage();
    expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Lyon' } });
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools,
      messages: [{ role: 'user', content: ASK }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' }] }],
    });
    expect(second.content[0]).toMatchObject({ type: 'text' });
    expect((second.content[0] as Anthropic.TextBlock).text).toContain('sunny, 21 C');
  });

  it('gemini: a functionCall part, then a functionResponse; streamed the same', async () => {
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${base}/gemini` } });
    const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: PARAMS }] }] };
    const first = await ai.models.generateContent({ model: MODEL, contents: ASK, config });
    expect(first.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Lyon' } })]);
    let streamedCalls: unknown[] = [];
    for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents: ASK, config })) streamedCalls = [...streamedCalls, ...(chunk.functionCalls ?? [])];
    expect(streamedCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Lyon' } })]);
    const second = await ai.models.generateContent({
      model: MODEL,
      config,
      contents: [
        { role: 'user', parts: [{ text: ASK }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Lyon' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny, 21 C' } } }] },
      ],
    });
    expect(second.text).toContain('sunny, 21 C');
  });

  it('a forced tool is called with arguments its schema takes; a JSON-schema output is JSON the schema takes', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const schema = { type: 'object', properties: { city: { type: 'string', enum: ['Lyon', 'Oslo'] }, days: { type: 'integer', minimum: 3 }, tags: { type: 'array', items: { type: 'string' } } }, required: ['city', 'days', 'tags'], additionalProperties: false };
    const forced = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Plan a trip.' }],
      tools: [{ type: 'function', function: { name: 'plan', parameters: schema } }],
      tool_choice: { type: 'function', function: { name: 'plan' } },
    });
    const call = forced.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
    expect(call.function.name).toBe('plan');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Lyon', days: 3, tags: ['simulated'] });
    const structured = await client.responses.create({ model: MODEL, input: 'Plan a trip.', text: { format: { type: 'json_schema', name: 'trip', schema, strict: true } } });
    expect(JSON.parse(structured.output_text)).toEqual({ city: 'Lyon', days: 3, tags: ['simulated'] });
  });

  it("the wrapped /v1beta surface: a call with tools gets the functionCall, wrapped in {code, data}", async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1beta/models/${MODEL}:generateContent`,
      headers: { authorization: `Bearer ${key}` },
      payload: { contents: [{ role: 'user', parts: [{ text: ASK }] }], tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: PARAMS }] }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ code: 200, data: { candidates: [{ content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Lyon' } } }] } }] } });
  });
});
