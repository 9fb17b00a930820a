import { ApiError, FunctionCallingConfigMode, GoogleGenAI, type Content, type GenerateContentConfig } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGeminiText, type FakeGeminiText } from './support/fake-gemini-text.ts';
import type { ScriptedPart } from './support/fake-script.ts';

// Issue 33 item 5: the strict Gemini fake driven by @google/genai with what Gemini CLI sends
// (functionDeclarations, toolConfig, systemInstruction, thinkingConfig, functionCall/functionResponse
// turns with thought signatures) and answering what it parses.

let fake: FakeGeminiText;
let ai: GoogleGenAI;
const model = 'gemini-fake-flash';
const config: GenerateContentConfig = {
  systemInstruction: 'You are a CLI agent.',
  tools: [{ functionDeclarations: [{ name: 'read_file', description: 'Reads a file', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }] }],
  toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
  thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
  temperature: 0,
};

/** Thinks and calls read_file first; once the function's response is in, answers with text. */
function script(body: any): ScriptedPart[] {
  const response = body.contents.at(-1).parts.find((p: any) => p.functionResponse)?.functionResponse;
  if (response) return [{ type: 'text', text: `The file says ${response.response.output}.` }];
  return [{ type: 'thinking', thinking: 'Read it first.' }, { type: 'tool_use', name: 'read_file', input: { path: 'README.md' } }];
}

beforeAll(async () => {
  fake = await startFakeGeminiText();
  fake.script = script;
  fake.usage = { promptTokenCount: 120, candidatesTokenCount: 8, thoughtsTokenCount: 30, cachedContentTokenCount: 100, toolUsePromptTokenCount: 5 };
  ai = new GoogleGenAI({ apiKey: fake.key, httpOptions: { baseUrl: fake.url, retryOptions: { attempts: 1 } } });
});
afterAll(() => fake?.close());

async function thrown(call: () => Promise<unknown>): Promise<any> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

describe('Gemini fake, driven by @google/genai', () => {
  it('generateContent: a functionCall with a thought and its signature, then the functionResponse answered with text; usage classes', async () => {
    const user: Content = { role: 'user', parts: [{ text: 'What does README.md say?' }] };
    const called = await ai.models.generateContent({ model, contents: [user], config });
    expect(called.functionCalls).toEqual([{ name: 'read_file', args: { path: 'README.md' } }]);
    const parts = called.candidates![0]!.content!.parts!;
    expect(parts[0]).toEqual({ text: 'Read it first.', thought: true });
    expect(parts[1]!.thoughtSignature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(called.usageMetadata).toMatchObject({ promptTokenCount: 120, cachedContentTokenCount: 100, toolUsePromptTokenCount: 5, thoughtsTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 163 });
    // The model turn goes back as it came (thought and signature), then the function's response.
    const answered = await ai.models.generateContent({ model, config, contents: [user, called.candidates![0]!.content!, { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'hello' } } }] }] });
    expect(answered.text).toBe('The file says hello.');
    const sent = fake.requests.at(-1)!.body;
    expect(sent.contents[1].parts[1]).toMatchObject({ functionCall: { name: 'read_file' }, thoughtSignature: parts[1]!.thoughtSignature });
    expect(sent).toMatchObject({ systemInstruction: { parts: [{ text: 'You are a CLI agent.' }] }, toolConfig: { functionCallingConfig: { mode: 'AUTO' } }, generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } });
  });

  it('generateContentStream: the thought, the functionCall, then streamed text after the functionResponse', async () => {
    const user: Content = { role: 'user', parts: [{ text: 'Read it.' }] };
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model, contents: [user], config })) chunks.push(chunk);
    expect(chunks.flatMap((c) => c.functionCalls ?? [])).toEqual([{ name: 'read_file', args: { path: 'README.md' } }]);
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    const modelTurn: Content = { role: 'model', parts: chunks.flatMap((c) => c.candidates![0]!.content!.parts!) };
    let text = '';
    const next = await ai.models.generateContentStream({ model, config, contents: [user, modelTurn, { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'three words here' } } }] }] });
    for await (const chunk of next) text += chunk.text ?? '';
    expect(text).toBe('The file says three words here.');
  });

  it('is strict where the API is: turn order, unknown fields, bad config, no key', async () => {
    const refused = async (request: Parameters<typeof ai.models.generateContent>[0]) => {
      const err = await thrown(() => ai.models.generateContent(request));
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(400);
      return JSON.parse(err.message).error.message as string;
    };
    const stray = { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'x' } } }] };
    expect(await refused({ model, contents: [stray] })).toBe('Please ensure that function response turn comes immediately after a function call turn.');
    const twoCalls = { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }] };
    expect(await refused({ model, contents: [{ role: 'user', parts: [{ text: 'go' }] }, twoCalls, stray] })).toBe('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    // The SDK copies part fields it knows only; function declarations go through whole.
    expect(await refused({ model, contents: 'x', config: { tools: [{ functionDeclarations: [{ name: 'f', colour: 'red' } as any] }] } })).toBe(`Invalid JSON payload received. Unknown name "colour" at 'tools[0].function_declarations[0]': Cannot find field.`);
    expect(await refused({ model, contents: 'x', config: { thinkingConfig: { thinkingBudget: 100, thinkingLevel: 'HIGH' as any } } })).toBe('You can only set only one of thinking budget and thinking level.');
    expect(await refused({ model, contents: 'x', config: { tools: [{ functionDeclarations: [{ name: '1bad' }] }] } })).toMatch(/Invalid function name/);
    const noKey = await thrown(() => new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: fake.url, retryOptions: { attempts: 1 } } }).models.generateContent({ model, contents: 'x' }));
    expect(noKey).toBeInstanceOf(ApiError);
    expect(JSON.parse(noKey.message).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
  });
});
