import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentUpstream, TOOL_WORD, type AgentUpstream } from './support/agent-upstream.ts';

// The recording upstream of the agent tests (test/agents.test.ts) read by the vendors' own SDKs, in
// JSON and streamed: its scripted answers are well-formed in each format, including the JSON paths
// the agents themselves did not take (a gateway test may).

let up: AgentUpstream;
afterEach(async () => { await up?.close(); });

const command = `echo ${TOOL_WORD}`;

describe('the agent upstream answers in each vendor format', () => {
  it('messages: a Bash tool_use, then text quoting the tool_result, as JSON and as a stream', async () => {
    up = await startAgentUpstream('tool');
    const client = new Anthropic({ apiKey: 'k', baseURL: up.url, maxRetries: 0 });
    const tools = [{ name: 'Bash', description: 'shell', input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } } }];
    const ask = { model: 'm', max_tokens: 100, tools, messages: [{ role: 'user' as const, content: 'run it' }] };
    const json = await client.messages.create(ask);
    expect(json.stop_reason).toBe('tool_use');
    expect(json.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command } });
    const streamed = await client.messages.stream(ask).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command } });
    const use = json.content[0] as Anthropic.ToolUseBlock;
    const answer = await client.messages.stream({
      ...ask,
      messages: [...ask.messages, { role: 'assistant', content: [use] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: TOOL_WORD }] }],
    }).finalMessage();
    expect(answer).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: `The tool printed: ${TOOL_WORD}` }] });
    expect(up.requests.map((r) => r.answered)).toEqual(['tool', 'tool', 'text']);
  });

  it('Responses: a function_call, then text quoting the function_call_output, as JSON and as a stream', async () => {
    up = await startAgentUpstream('tool');
    const client = new OpenAI({ apiKey: 'k', baseURL: `${up.url}/v1`, maxRetries: 0 });
    const tools = [{ type: 'function' as const, name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }];
    const json = await client.responses.create({ model: 'm', input: 'run it', tools, stream: false });
    const call = json.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(JSON.parse(call.arguments)).toEqual({ cmd: command });
    const streamed = await client.responses.stream({ model: 'm', input: 'run it', tools }).finalResponse();
    expect(streamed.output[0]).toMatchObject({ type: 'function_call', name: 'exec_command' });
    const answer = await client.responses.stream({
      model: 'm', tools,
      input: [{ role: 'user', content: 'run it' }, call, { type: 'function_call_output', call_id: call.call_id, output: TOOL_WORD }],
    }).finalResponse();
    expect(answer.output_text).toBe(`The tool printed: ${TOOL_WORD}`);
    expect(answer.usage?.total_tokens).toBe(25);
  });

  it('Gemini: a run_shell_command functionCall, then text quoting the functionResponse, as JSON and as a stream', async () => {
    up = await startAgentUpstream('tool');
    const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: `${up.url}/gemini`, retryOptions: { attempts: 1 } } });
    const config = { tools: [{ functionDeclarations: [{ name: 'run_shell_command', description: 'shell' }] }] };
    const json = await ai.models.generateContent({ model: 'm', contents: 'run it', config });
    expect(json.functionCalls).toEqual([expect.objectContaining({ name: 'run_shell_command', args: { command } })]);
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model: 'm', contents: 'run it', config })) chunks.push(chunk);
    expect(chunks.flatMap((c) => c.functionCalls ?? [])).toEqual([expect.objectContaining({ name: 'run_shell_command' })]);
    const answer = await ai.models.generateContent({
      model: 'm', config,
      contents: [
        { role: 'user', parts: [{ text: 'run it' }] },
        { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: { command } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: TOOL_WORD } } }] },
      ],
    });
    expect(answer.text).toBe(`The tool printed: ${TOOL_WORD}`);
    expect(up.requests.at(-1)!.headers['x-goog-api-key']).toBe('k');
    expect((await ai.models.countTokens({ model: 'm', contents: 'hi' })).totalTokens).toBe(10);
  });

  it('plain mode answers text even when tools are offered; a proxy request for another host is refused and recorded', async () => {
    up = await startAgentUpstream('plain');
    const client = new Anthropic({ apiKey: 'k', baseURL: up.url, maxRetries: 0 });
    const json = await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'Bash', input_schema: { type: 'object' } }] });
    expect(json.content).toEqual([{ type: 'text', text: 'gw-plain-answer' }]);
    const viaProxy = await new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(up.url);
      http.request({ host: hostname, port, method: 'CONNECT', path: 'vendor.example:443' })
        .on('connect', (res, socket) => { socket.destroy(); resolve(res.statusCode!); }).on('error', reject).end();
    });
    expect(viaProxy).toBe(403);
    expect(up.outbound).toEqual(['vendor.example:443']);
  });
});
