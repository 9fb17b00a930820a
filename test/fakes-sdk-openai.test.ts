import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIText, type FakeOpenAIText } from './support/fake-openai-text.ts';
import type { ScriptedPart } from './support/fake-script.ts';

// Issue 33 item 5: the strict OpenAI fake (Responses and chat completions) driven by the official SDK
// with what Codex sends (instructions, reasoning items with encrypted_content, function and custom
// tools, store: false, include, prompt_cache_key, text.verbosity) and answering what it parses.

let fake: FakeOpenAIText;
let sdk: OpenAI;
const model = 'gpt-fake-mini';
const shell: OpenAI.Responses.FunctionTool = { type: 'function', name: 'shell', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] } };

/** Reasons and calls `shell` first; once the call's output is in, answers with text. */
function responsesScript(body: any): ScriptedPart[] {
  const output = [...(body.input as any[])].reverse().find((item) => item.type === 'function_call_output');
  if (output) return [{ type: 'text', text: `The listing: ${output.output}` }];
  return [{ type: 'thinking', thinking: 'List the files first.' }, { type: 'tool_use', name: 'shell', input: { command: ['ls'] } }];
}

/** A Codex turn: everything it sends beside the conversation (codex-rs ResponsesApiRequest). */
const codex = (input: OpenAI.Responses.ResponseInput) => ({
  model,
  instructions: 'You are a coding agent.',
  input,
  tools: [shell, { type: 'custom' as const, name: 'apply_patch', description: 'Applies a patch' }, { type: 'web_search' as const }],
  tool_choice: 'auto' as const,
  parallel_tool_calls: false,
  reasoning: { effort: 'medium' as const, summary: 'auto' as const },
  store: false,
  include: ['reasoning.encrypted_content' as const],
  prompt_cache_key: 'session-1',
  text: { verbosity: 'low' as const },
  // Not in the SDK's types; Codex adds it for trace context.
  ...({ client_metadata: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } } as {}),
});

beforeAll(async () => {
  fake = await startFakeOpenAIText();
  fake.usage = { prompt_tokens: 900, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens: 150, completion_tokens_details: { reasoning_tokens: 60 } };
  sdk = new OpenAI({ apiKey: fake.key, baseURL: `${fake.url}/v1`, maxRetries: 0 });
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

describe('OpenAI fake: Responses, driven by the openai SDK', () => {
  it('a function tool round trip with store false: reasoning with encrypted_content and function_call, then text; usage', async () => {
    fake.script = responsesScript;
    const user: OpenAI.Responses.ResponseInputItem[] = [{ role: 'developer', content: 'Be terse.' }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is here?' }] }];
    const called = await sdk.responses.create({ ...codex(user), stream: false });
    expect(called).toMatchObject({ object: 'response', status: 'completed', store: false, usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 400 }, output_tokens: 150, output_tokens_details: { reasoning_tokens: 60 }, total_tokens: 1050 } });
    expect(called.id).toMatch(/^resp_/);
    expect(called.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    const reasoning = called.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.encrypted_content).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const call = called.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(call.arguments)).toEqual({ command: ['ls'] });
    // Codex replays the items (not stored) with the call's output.
    const answered = await sdk.responses.create({ ...codex([...user, reasoning, call, { type: 'function_call_output', call_id: call.call_id, output: 'README.md' }]), stream: false });
    expect(answered.output_text).toBe('The listing: README.md');
    // Not stored: neither retrievable nor a previous response.
    expect(await thrown(() => sdk.responses.retrieve(called.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const notFound = await thrown(() => sdk.responses.create({ model, input: 'more', previous_response_id: called.id }));
    expect(notFound).toBeInstanceOf(OpenAI.BadRequestError);
    expect([notFound.code, notFound.param, notFound.message]).toEqual(['previous_response_not_found', 'previous_response_id', `400 Previous response with id '${called.id}' not found.`]);
  });

  it('streams the full event sequence; the responses.stream helper assembles text and function arguments', async () => {
    fake.script = (body) => (body.input === 'both' ? [{ type: 'thinking', thinking: 'Hm.' }, { type: 'text', text: 'Listing now.' }, { type: 'tool_use', name: 'shell', input: { command: ['ls', '-a'] } }] : undefined);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await sdk.responses.create({ model, input: 'both', tools: [shell], stream: true, reasoning: { summary: 'auto' } })) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    const stream = sdk.responses.stream({ model, input: 'both', tools: [shell] });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toBe('Listing now.');
    expect(final.output_text).toBe('Listing now.');
    expect(final.output[2]).toMatchObject({ type: 'function_call', name: 'shell', arguments: '{"command":["ls","-a"]}' });
  });

  it('stored responses: GET /v1/responses/{id} and previous_response_id carry the conversation; a custom tool call', async () => {
    fake.script = (body) => (body.input === 'patch it' ? [{ type: 'tool_use', name: 'apply_patch', input: { input: '*** Begin Patch' } }] : undefined);
    const first = await sdk.responses.create({ model, input: 'patch it', tools: [{ type: 'custom', name: 'apply_patch' }] });
    expect(first.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' });
    expect(await sdk.responses.retrieve(first.id)).toEqual(first);
    const callId = (first.output[0] as OpenAI.Responses.ResponseCustomToolCall).call_id;
    const next = await sdk.responses.create({ model, previous_response_id: first.id, input: [{ type: 'custom_tool_call_output', call_id: callId, output: 'done' }, { role: 'user', content: 'thanks' }] });
    expect(next).toMatchObject({ previous_response_id: first.id, output_text: 'echo: thanks' });
    const orphan = await thrown(() => sdk.responses.create({ model, input: [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }] }));
    expect(orphan.message).toBe('400 No tool call found for function call output with call_id call_nowhere.');
  });

  it('is strict where the API is: unknown fields, wrong types, bad items, no key', async () => {
    const refused = async (body: any) => {
      const err = await thrown(() => sdk.responses.create(body));
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      return [err.code, err.param, err.message];
    };
    expect(await refused({ model, input: 'x', bogus: 1 })).toEqual(['unknown_parameter', 'bogus', "400 Unknown parameter: 'bogus'."]);
    expect(await refused({ model, input: 'x', store: 'yes' })).toEqual(['invalid_type', 'store', "400 Invalid type for 'store': expected a boolean, but got string instead."]);
    expect(await refused({ model, input: 'x', include: ['reasoning.everything'] })).toEqual(['invalid_value', 'include[0]', expect.stringContaining("400 Invalid value: 'reasoning.everything'.")]);
    expect((await refused({ model, input: [{ type: 'message', role: 'user', content: [{ type: 'output_text', text: 'x' }] }] }))[0]).toBe('invalid_value');
    expect(await refused({ model, input: 'x', reasoning: { effort: 'enormous' } })).toEqual(['invalid_value', 'reasoning.effort', expect.stringContaining("'enormous'")]);
    expect(await refused({ input: 'x' })).toEqual(['missing_required_parameter', 'model', "400 Missing required parameter: 'model'."]);
    const wrongKey = await thrown(() => new OpenAI({ apiKey: 'sk-wrong', baseURL: `${fake.url}/v1`, maxRetries: 0 }).responses.create({ model, input: 'x' }));
    expect(wrongKey).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(wrongKey.code).toBe('invalid_api_key');
    const noKey = await request(`${fake.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'x' }) });
    expect(noKey.statusCode).toBe(401);
    expect(((await noKey.body.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param: null, code: null });
  });
});

describe('OpenAI fake: chat completions with tools, driven by the openai SDK', () => {
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

  it('streams two tool calls the SDK assembles, reports cached and reasoning tokens, then takes the tool messages', async () => {
    fake.script = (body) => (body.messages.at(-1).role === 'tool' ? [{ type: 'text', text: 'Both sunny.' }] : [{ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }, { type: 'tool_use', name: 'get_weather', input: { city: 'Lyon' } }]);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and Lyon?' }];
    const final = await sdk.chat.completions.stream({ model, messages, tools, stream_options: { include_usage: true } }).finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    const calls = final.choices[0]!.message.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => JSON.parse(c.function.arguments))).toEqual([{ city: 'Paris' }, { city: 'Lyon' }]);
    expect(final.usage).toMatchObject({ prompt_tokens: 900, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 60 } });
    const answered = await sdk.chat.completions.create({ model, tools, messages: [...messages, { role: 'assistant', content: null, tool_calls: calls }, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'sunny' }))] });
    expect(answered.choices[0]!.message.content).toBe('Both sunny.');
    const unanswered = await thrown(() => sdk.chat.completions.create({ model, tools, messages: [...messages, { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: calls[0]!.id, content: 'sunny' }] }));
    expect(unanswered).toBeInstanceOf(OpenAI.BadRequestError);
    expect(unanswered.message).toBe(`400 An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${calls[1]!.id}`);
  });
});
