import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMessagesText, type FakeMessagesText } from './support/fake-messages-text.ts';
import type { ScriptedPart } from './support/fake-script.ts';

// Issue 33 item 5: the strict messages fake driven by the official SDK with what agents send (tools,
// tool results, thinking, cache_control, the beta client's headers) and answering what it parses:
// tool_use blocks (whole and streamed as input_json_delta), thinking with its signature, cache usage.
// The OpenAI and Gemini fakes have their own files (fakes-sdk-openai, fakes-sdk-gemini).

let fake: FakeMessagesText;
let sdk: Anthropic;
const model = 'messages-fake-small';
const weather = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

/** Calls the tool first; once its result is in, answers with text. */
function toolThenText(body: any): ScriptedPart[] {
  const last = body.messages.at(-1);
  const result = Array.isArray(last.content) ? last.content.find((b: any) => b.type === 'tool_result') : undefined;
  if (result) return [{ type: 'text', text: `It is ${result.content} in Paris.` }];
  return [{ type: 'thinking', thinking: 'I should look the weather up.' }, { type: 'text', text: 'Looking.' }, { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }];
}

beforeAll(async () => {
  fake = await startFakeMessagesText();
  sdk = new Anthropic({ apiKey: fake.key, baseURL: fake.url, maxRetries: 0 });
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

describe('messages fake, driven by @anthropic-ai/sdk', () => {
  it('a tool round trip: tool_use with thinking, then the tool_result answered with text; cache usage as configured', async () => {
    fake.script = toolThenText;
    fake.usage = { input_tokens: 40, output_tokens: 9, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3000 };
    // What an agent sends: system blocks with cache_control, a system message mid-conversation, tools
    // (one cached), adaptive thinking, output_config, metadata.
    const first = {
      model,
      max_tokens: 4096,
      system: [{ type: 'text' as const, text: 'You are an agent.', cache_control: { type: 'ephemeral' as const } }],
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'Weather in Paris?', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }] },
        { role: 'system' as const, content: 'The user is in a hurry.' },
      ],
      tools: [{ ...weather, cache_control: { type: 'ephemeral' as const } }, { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }],
      tool_choice: { type: 'auto' as const },
      thinking: { type: 'adaptive' as const },
      output_config: { effort: 'high' as const },
      metadata: { user_id: 'user-1' },
    };
    const called = await sdk.messages.create(first);
    expect(called.stop_reason).toBe('tool_use');
    expect(called.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    const use = called.content[2] as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    expect(use.id).toMatch(/^toolu_/);
    expect((called.content[0] as Anthropic.ThinkingBlock).signature).not.toBe('');
    expect(called.usage).toMatchObject({ input_tokens: 40, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3000, output_tokens: 9 });
    // The answer goes back whole (thinking and all), the result in the next user message.
    const answered = await sdk.messages.create({
      ...first,
      messages: [...first.messages, { role: 'assistant', content: called.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
    });
    expect(answered).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'It is sunny in Paris.' }] });
  });

  it("Claude Code's request (2.1.165: ?beta=true, its anthropic-beta list, adaptive thinking, a system message mid-conversation, 25 tools), streamed tool_use assembled by the SDK", async () => {
    fake.script = toolThenText;
    // As observed from Claude Code 2.1.165 against a fake upstream (see the report of this change):
    // the beta client with ?beta=true, x-api-key, these betas, and these body keys.
    const betas = 'claude-code-20250219, interleaved-thinking-2025-05-14, context-management-2025-06-27, prompt-caching-scope-2026-01-05, mid-conversation-system-2026-04-07, effort-2025-11-24';
    const claudeCode = new Anthropic({ apiKey: fake.key, baseURL: fake.url, maxRetries: 0, defaultQuery: { beta: 'true' }, defaultHeaders: { 'anthropic-beta': betas } });
    const tools = Array.from({ length: 24 }, (_, i) => ({ name: `mcp__tools__t${i}`, description: `Tool ${i}`, input_schema: { type: 'object' as const, properties: {} } }));
    const stream = claudeCode.beta.messages.stream({
      model,
      max_tokens: 32000,
      system: [{ type: 'text', text: 'You are Claude Code.' }, { type: 'text', text: 'Project notes.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral' } }] },
        { role: 'system', content: [{ type: 'text', text: 'Reminder: be brief.' }] },
      ],
      metadata: { user_id: 'user_abc_account_x_session_y' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      tools: [...tools, weather],
    });
    const jsonParts: string[] = [];
    stream.on('inputJson', (partial) => jsonParts.push(partial));
    let thinking = '';
    stream.on('thinking', (delta) => (thinking += delta));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(final.content[2]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(final.content[0]).toMatchObject({ thinking: 'I should look the weather up.' });
    expect((final.content[0] as any).signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(thinking).toBe('I should look the weather up.');
    expect(jsonParts.join('')).toBe('{"city":"Paris"}');
    expect(final.usage).toMatchObject({ input_tokens: 40, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3000, output_tokens: 9 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages?beta=true');
    expect(sent.headers['anthropic-beta']).toBe(betas);
    expect(Object.keys(sent.body).sort()).toEqual(['context_management', 'max_tokens', 'messages', 'metadata', 'model', 'output_config', 'stream', 'system', 'thinking', 'tools']);
    expect(sent.body.tools).toHaveLength(25);
  });

  it('without a script it echoes, streamed in text deltas', async () => {
    fake.script = undefined;
    const final = await sdk.messages.stream({ model, max_tokens: 20, messages: [{ role: 'user', content: 'a b c' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: a b c' }]);
  });

  it('is strict where the API is: the SDK gets the vendor error classes and messages', async () => {
    const refused = async (body: any) => {
      const err = await thrown(() => sdk.messages.create(body));
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.requestID).toMatch(/^req_/);
      return err.error.error.message as string;
    };
    const user = { role: 'user', content: 'x' };
    expect(await refused({ model, max_tokens: 5, messages: [user], bogus: 1 })).toBe('bogus: Extra inputs are not permitted');
    expect(await refused({ model, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', colour: 'red' }] }] })).toBe('messages.0.content.0.text.colour: Extra inputs are not permitted');
    expect(await refused({ model, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] })).toMatch(/^messages\.0\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x/);
    const unanswered = [user, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} }] }, user];
    expect(await refused({ model, max_tokens: 5, messages: unanswered, tools: [weather] })).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a/);
    expect(await refused({ model, max_tokens: 5, messages: [user], tools: [{ name: 'f' }] })).toBe('tools.0.custom.input_schema: Field required');
    expect(await refused({ model, max_tokens: 5, messages: [user], thinking: { type: 'enabled', budget_tokens: 100 } })).toBe('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    expect(await refused({ model, max_tokens: 5, messages: [user], tool_choice: { type: 'sometimes' } })).toMatch(/^tool_choice: Input tag 'sometimes'/);
    const toolTurn = [user, { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: 'sunny' }] }];
    expect(await refused({ model, max_tokens: 4096, messages: toolTurn, tools: [weather], thinking: { type: 'enabled', budget_tokens: 2048 } })).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`/);
    const thoughtFirst = [user, { role: 'assistant', content: [{ type: 'thinking', thinking: 'Look it up.', signature: 'c2ln' }, ...(toolTurn[1] as any).content] }, toolTurn[2]];
    expect(await sdk.messages.create({ model, max_tokens: 4096, messages: thoughtFirst as any, tools: [weather], thinking: { type: 'enabled', budget_tokens: 2048 } })).toMatchObject({ stop_reason: 'end_turn' });
    const cached = { type: 'text', text: 'x', cache_control: { type: 'ephemeral' } };
    expect(await refused({ model, max_tokens: 5, messages: [{ role: 'user', content: [cached, cached, cached, cached, cached] }] })).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    const noKey = await thrown(() => new Anthropic({ apiKey: 'nope', baseURL: fake.url, maxRetries: 0 }).messages.create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    expect(noKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(noKey.error).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  });
});
