import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessageChunk, HumanMessage, ToolMessage, type AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backendName } from './harness.ts';
import { ASK, FAKE_OBJECT, fakeOf, forcedTool, ON_FAKE, SIM, startFrameworkGateway, TOOL_RESULT, type FrameworkGateway } from './support/sdk-frameworks.ts';

// Issue 33, must-show 3 (LangChain JS half; the Vercel AI SDK is in sdk-frameworks-ai.test.ts):
// ChatOpenAI (chat completions and, with useResponsesApi, Responses), ChatAnthropic and
// ChatGoogleGenerativeAI bind tools and get tool_calls (invoked and streamed), finish the round trip
// with a ToolMessage, and give structured output with withStructuredOutput(zod) by both methods
// (function calling: a forced tool; jsonSchema: the format's own JSON-schema output): on the
// simulator, on the fake of the model class's own format, and on another format's fake.

let gw: FrameworkGateway;
beforeAll(async () => void (gw = await startFrameworkGateway()));
afterAll(async () => gw?.close());

type Provider = 'openai-chat' | 'openai-responses' | 'anthropic' | 'google';
/** The chat model, pointed at the running gateway with a caller key. */
function chat(provider: Provider, model: string): BaseChatModel {
  const { base, key } = gw;
  if (provider === 'openai-chat') return new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: `${base}/v1` }, maxRetries: 0 });
  if (provider === 'openai-responses') return new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: `${base}/v1` }, useResponsesApi: true, maxRetries: 0 });
  if (provider === 'anthropic') return new ChatAnthropic({ model, apiKey: key, anthropicApiUrl: base, maxRetries: 0 });
  // The @google/generative-ai client under it adds /v1beta/models/... to baseUrl.
  return new ChatGoogleGenerativeAI({ model, apiKey: key, baseUrl: `${base}/gemini`, maxRetries: 0 });
}

const routes: [Provider, string, string][] = [
  ['openai-chat', 'simulator', SIM],
  ['openai-chat', 'openai fake (same format)', ON_FAKE.openai],
  ['openai-chat', 'messages fake (translated)', ON_FAKE.messages],
  ['openai-responses', 'simulator', SIM],
  ['openai-responses', 'openai fake (same format)', ON_FAKE.openai],
  ['openai-responses', 'gemini fake (translated)', ON_FAKE.gemini],
  ['anthropic', 'simulator', SIM],
  ['anthropic', 'messages fake (same format)', ON_FAKE.messages],
  ['anthropic', 'gemini fake (translated)', ON_FAKE.gemini],
  ['google', 'simulator', SIM],
  ['google', 'gemini fake (same format)', ON_FAKE.gemini],
  ['google', 'openai fake (translated)', ON_FAKE.openai],
];

const getWeather = tool(async () => TOOL_RESULT, { name: 'get_weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) });
const weather = z.object({ city: z.string().describe('The city'), temperature: z.number().describe('Degrees Celsius') }).describe('The weather in a city');
/** A structured answer: the fakes fill in FAKE_OBJECT, the simulator values its schema asks for. */
const schemaShaped = (object: unknown, id: string) => expect(object).toEqual(id === SIM ? { city: expect.any(String), temperature: expect.any(Number) } : FAKE_OBJECT);

describe.each(routes)(`LangChain's %s model on the %s [${backendName}]`, (provider, _route, id) => {
  it('bindTools: invoke gives tool_calls; a ToolMessage with the result gets a text quoting it', async () => {
    const model = chat(provider, id).bindTools!([getWeather]);
    const called = (await model.invoke([new HumanMessage(ASK)])) as AIMessage;
    expect(called.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Lyon' } })]);
    const call = called.tool_calls![0]!;
    const answered = await model.invoke([new HumanMessage(ASK), called, new ToolMessage({ tool_call_id: call.id!, content: await getWeather.invoke(call.args as { city: string }) })]);
    expect(answered.text).toContain(TOOL_RESULT);
  });

  it("bindTools with tool_choice naming the tool forces the call without the simulator's directive", async () => {
    const forced = (await chat(provider, id).bindTools!([getWeather], { tool_choice: 'get_weather' }).invoke('What is the weather in Lyon?')) as AIMessage;
    expect(forced.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: id === SIM ? expect.any(String) : 'Lyon' } })]);
    // The fake was told to call it, in its own format's words when the route translates.
    if (id !== SIM) expect(forcedTool(fakeOf(gw, id)!.requests.at(-1)!.body)).toBe('get_weather');
  });

  it('bindTools: a streamed answer concatenates into the same tool call', async () => {
    const model = chat(provider, id).bindTools!([getWeather]);
    let whole: AIMessageChunk | undefined;
    for await (const chunk of await model.stream([new HumanMessage(ASK)])) whole = whole ? whole.concat(chunk) : chunk;
    expect(whole!.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Lyon' } })]);
  });

  it.each(['functionCalling', 'jsonSchema'] as const)('withStructuredOutput(zod, %s) gives the parsed object, invoked and streamed', async (method) => {
    const structured = chat(provider, id).withStructuredOutput(weather, { method, name: 'weather' });
    schemaShaped(await structured.invoke('The weather in Lyon, as an object.'), id);
    // LangChain's own limits, not the gateway's: streamed through a forced tool, ChatAnthropic's
    // parser throws on the tool block's empty first input ("Failed to parse. Text: \"\"") and the
    // Responses parser on array content ("Cannot handle non-string output"), against the vendors'
    // fakes directly too.
    if (method === 'functionCalling' && (provider === 'anthropic' || provider === 'openai-responses')) return;
    let last: unknown;
    for await (const partial of await structured.stream('The weather in Lyon, as an object.')) last = partial;
    schemaShaped(last, id);
  });
});
