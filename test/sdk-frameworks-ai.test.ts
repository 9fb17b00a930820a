import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, Output, stepCountIs, streamObject, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backendName } from './harness.ts';
import { ASK, FAKE_OBJECT, fakeOf, forcedTool, ON_FAKE, SIM, startFrameworkGateway, TOOL_RESULT, type FrameworkGateway } from './support/sdk-frameworks.ts';

// Issue 33, must-show 3 (Vercel AI SDK half; LangChain is in sdk-frameworks-langchain.test.ts): the
// `ai` package with its openai (Responses and chat), anthropic and google providers calls tools and
// gets structured output through the gateway, streamed and not: on the simulator, on the fake of the
// provider's own format, and on another format's fake (a translating route).

// Its only warnings here say our model names are unknown to the anthropic provider (so it caps
// max_tokens at 4096): noise in the run's output.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let gw: FrameworkGateway;
beforeAll(async () => void (gw = await startFrameworkGateway()));
afterAll(async () => gw?.close());

type Provider = 'openai-responses' | 'openai-chat' | 'anthropic' | 'google';
/** The model a provider is handed, built on the running gateway (its base URL and a caller key). */
function model(provider: Provider, id: string): LanguageModel {
  const { base, key } = gw;
  if (provider === 'openai-responses') return createOpenAI({ baseURL: `${base}/v1`, apiKey: key })(id);
  if (provider === 'openai-chat') return createOpenAI({ baseURL: `${base}/v1`, apiKey: key }).chat(id);
  if (provider === 'anthropic') return createAnthropic({ baseURL: `${base}/v1`, apiKey: key })(id);
  return createGoogleGenerativeAI({ baseURL: `${base}/gemini/v1beta`, apiKey: key })(id);
}

// Each provider on the simulator, on its own format's fake, and on another format's fake.
const routes: [Provider, string, string][] = [
  ['openai-responses', 'simulator', SIM],
  ['openai-responses', 'openai fake (same format)', ON_FAKE.openai],
  ['openai-responses', 'messages fake (translated)', ON_FAKE.messages],
  ['openai-chat', 'simulator', SIM],
  ['openai-chat', 'openai fake (same format)', ON_FAKE.openai],
  ['openai-chat', 'gemini fake (translated)', ON_FAKE.gemini],
  ['anthropic', 'simulator', SIM],
  ['anthropic', 'messages fake (same format)', ON_FAKE.messages],
  ['anthropic', 'openai fake (translated)', ON_FAKE.openai],
  ['google', 'simulator', SIM],
  ['google', 'gemini fake (same format)', ON_FAKE.gemini],
  ['google', 'messages fake (translated)', ON_FAKE.messages],
];

const weatherInput = z.object({ city: z.string() });
const weather = z.object({ city: z.string(), temperature: z.number() });
/** A structured answer: the fakes fill in FAKE_OBJECT, the simulator values its schema asks for. */
const schemaShaped = (object: unknown, id: string) => expect(object).toEqual(id === SIM ? { city: expect.any(String), temperature: expect.any(Number) } : FAKE_OBJECT);

/** streamObject's final object; its promises settle only once the stream is read (the SDK streams with backpressure). */
async function streamedObject(model: LanguageModel, providerOptions?: Record<string, any>): Promise<unknown> {
  const streamed = streamObject({ model, schema: weather, prompt: 'The weather in Lyon, as an object.', providerOptions, maxRetries: 0 });
  const partials: unknown[] = [];
  for await (const partial of streamed.partialObjectStream) partials.push(partial);
  expect(partials.length).toBeGreaterThan(0);
  return streamed.object;
}

describe.each(routes)(`the AI SDK's %s provider on the %s [${backendName}]`, (provider, _route, id) => {
  it('generateText: the tool call comes back; with execute and stopWhen the round trip ends in a text quoting the result', async () => {
    const called = await generateText({ model: model(provider, id), prompt: ASK, tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: weatherInput }) }, maxRetries: 0 });
    expect(called.finishReason).toBe('tool-calls');
    expect(called.toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Lyon' } })]);

    const executed: unknown[] = [];
    const get_weather = tool({ description: 'The weather in a city', inputSchema: weatherInput, execute: async (input) => (executed.push(input), TOOL_RESULT) });
    const done = await generateText({ model: model(provider, id), prompt: ASK, tools: { get_weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(executed).toEqual([{ city: 'Lyon' }]);
    expect(done.steps).toHaveLength(2);
    expect(done.text).toContain(TOOL_RESULT);
  });

  it("toolChoice naming the tool forces the call without the simulator's directive", async () => {
    const forced = await generateText({ model: model(provider, id), prompt: 'What is the weather in Lyon?', tools: { get_weather: tool({ inputSchema: weatherInput }) }, toolChoice: { type: 'tool', toolName: 'get_weather' }, maxRetries: 0 });
    expect(forced.toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: id === SIM ? expect.any(String) : 'Lyon' } })]);
    // The fake was told to call it, in its own format's words when the route translates.
    if (id !== SIM) expect(forcedTool(fakeOf(gw, id)!.requests.at(-1)!.body)).toBe('get_weather');
  });

  it('streamText: the streamed tool call assembles; the round trip streams to the quoting text', async () => {
    const streamed = streamText({ model: model(provider, id), prompt: ASK, tools: { get_weather: tool({ inputSchema: weatherInput }) }, maxRetries: 0 });
    expect(await streamed.toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Lyon' } })]);
    expect(await streamed.finishReason).toBe('tool-calls');

    const round = streamText({ model: model(provider, id), prompt: ASK, tools: { get_weather: tool({ inputSchema: weatherInput, execute: async () => TOOL_RESULT }) }, stopWhen: stepCountIs(3), maxRetries: 0 });
    let text = '';
    for await (const delta of round.textStream) text += delta;
    expect(text).toContain(TOOL_RESULT);
  });

  it('generateObject and streamObject with a zod schema give the parsed object; so does generateText with Output.object', async () => {
    const { object } = await generateObject({ model: model(provider, id), schema: weather, prompt: 'The weather in Lyon, as an object.', maxRetries: 0 });
    schemaShaped(object, id);
    schemaShaped(await streamedObject(model(provider, id)), id);
    const { output } = await generateText({ model: model(provider, id), output: Output.object({ schema: weather }), prompt: 'The weather in Lyon.', maxRetries: 0 });
    schemaShaped(output, id);
    // A fake's request carried the schema, in its own format when the route translates.
    if (id !== SIM) expect(JSON.stringify(fakeOf(gw, id)!.requests.at(-1)!.body)).toContain('"temperature"');
  });
});

describe(`the AI SDK's anthropic provider with native structured output (output_config.format) [${backendName}]`, () => {
  it.each([
    ['simulator', SIM],
    ['messages fake', ON_FAKE.messages],
    ['gemini fake (translated)', ON_FAKE.gemini],
  ])('on the %s', async (_route, id) => {
    const anthropic = { anthropic: { structuredOutputMode: 'outputFormat' as const } };
    const { object } = await generateObject({ model: model('anthropic', id), schema: weather, prompt: 'The weather in Lyon.', providerOptions: anthropic, maxRetries: 0 });
    schemaShaped(object, id);
    schemaShaped(await streamedObject(model('anthropic', id), anthropic), id);
  });
});
