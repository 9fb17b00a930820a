import { afterEach, describe, expect, it } from 'vitest';
import { FAILURE_MESSAGE, PLAIN_ANSWER, startAgentUpstream, TOOL_WORD, type AgentUpstream, type RecordedRequest } from './support/agent-upstream.ts';
import { AGENTS, installAgent, runClaudeCode, runCodex, runGeminiCli, type AgentName, type AgentResult, type AgentRunOptions } from './support/agents.ts';

// Issue 33: the three coding agents, installed from npm at pinned versions, run a one-shot prompt
// and a tool round trip (the model asks for `echo gw-tool-ok`, the agent runs it, the result goes
// back, the final answer quotes it). Here against a recording server standing in for the vendors,
// which also pins down what each agent sends first: the gateway must accept and forward all of it.

/** Where the agents' requests go: the recording server itself. Pointing the agents at the gateway is this line. */
const target = (upstream: AgentUpstream): string => upstream.url;

/** Each agent's base-URL setting, given the root it talks to. */
const BASES: Record<AgentName, (root: string) => string> = {
  'claude-code': (root) => root, // ANTHROPIC_BASE_URL
  codex: (root) => `${root}/v1`, // model_providers.<id>.base_url; Codex appends /responses
  'gemini-cli': (root) => `${root}/gemini`, // GOOGLE_GEMINI_BASE_URL
};

const RUNNERS: Record<AgentName, (o: AgentRunOptions) => Promise<AgentResult>> = {
  'claude-code': runClaudeCode,
  codex: runCodex,
  'gemini-cli': runGeminiCli,
};

const MODELS: Record<AgentName, string> = { 'claude-code': 'claude-agent-test', codex: 'gpt-agent-test', 'gemini-cli': 'gemini-agent-test' };
const API_KEY = 'gw-agent-test-key';

// Installing at collection time (a few seconds each once cached): under CI=true a failed install throws here and fails the file.
const installs = await Promise.all((Object.keys(AGENTS) as AgentName[]).map(async (name) => [name, await installAgent(name)] as const));
const missing = new Set(installs.filter(([, r]) => 'skip' in r).map(([name]) => name));
for (const [, r] of installs) if ('skip' in r) console.warn(`agent tests skipped (CI is not "true"): ${r.skip}`);

/** The model requests (not HEAD probes, token counts or model lists), in order. */
const modelCalls = (u: AgentUpstream): RecordedRequest[] => u.requests.filter((r) => r.answered === 'text' || r.answered === 'tool');

let upstream: AgentUpstream | undefined;
afterEach(async () => { await upstream?.close(); upstream = undefined; });

async function runAgainst(name: AgentName, mode: 'plain' | 'tool', prompt: string, failWith?: number): Promise<{ result: AgentResult; up: AgentUpstream }> {
  upstream = await startAgentUpstream(mode);
  upstream.failWith = failWith;
  const result = await RUNNERS[name]({
    baseUrl: BASES[name](target(upstream)), apiKey: API_KEY, model: MODELS[name], prompt,
    allowTools: mode === 'tool', proxyUrl: upstream.url, timeoutMs: 60_000,
  });
  const why = `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr.slice(-3000)}\nrequests: ${upstream.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`;
  expect(result.code, why).toBe(failWith ? 1 : 0);
  expect(result.timedOut, why).toBe(false);
  // Every request stayed on the local server: nothing tried a vendor host through the proxy.
  expect(upstream.outbound, why).toEqual([]);
  return { result, up: upstream };
}

describe('coding agents against a recording upstream', { timeout: 120_000 }, () => {
  it.skipIf(missing.has('claude-code'))('Claude Code prints the answer of a one-shot prompt; its first request is a streamed beta messages call', async () => {
    const { result, up } = await runAgainst('claude-code', 'plain', 'Say the plain answer.');
    expect(result.stdout.trim()).toBe(PLAIN_ANSWER);
    const [first] = modelCalls(up);
    expect(first!.method).toBe('POST');
    expect(first!.path).toBe('/v1/messages?beta=true');
    expect(first!.headers['x-api-key']).toBe(API_KEY);
    expect(first!.headers['anthropic-version']).toBe('2023-06-01');
    expect(String(first!.headers['anthropic-beta']).split(',')).toContain('claude-code-20250219');
    expect(first!.headers['user-agent']).toMatch(/^claude-cli\/2\.1\.197 /);
    expect(first!.headers['x-app']).toBe('cli');
    expect(Object.keys(first!.body).sort()).toEqual(['context_management', 'max_tokens', 'messages', 'metadata', 'model', 'output_config', 'stream', 'system', 'thinking', 'tools']);
    expect(first!.body).toMatchObject({ model: MODELS['claude-code'], stream: true, thinking: { type: 'adaptive' } });
    // "role": "system" inside messages (beta mid-conversation-system-2026-04-07): the gateway must pass it through.
    expect(first!.body.messages.map((m: any) => m.role)).toContain('system');
  });

  it.skipIf(missing.has('claude-code'))('Claude Code runs the Bash tool the model asked for and quotes its result', async () => {
    const { result, up } = await runAgainst('claude-code', 'tool', 'Run the shell command, then tell me what it printed.');
    const [first, second] = modelCalls(up);
    expect(first!.answered).toBe('tool');
    expect(first!.body.tools.map((t: any) => t.name)).toContain('Bash');
    const last = second!.body.messages.at(-1);
    expect(last.content).toEqual([expect.objectContaining({ type: 'tool_result', content: TOOL_WORD, is_error: false })]);
    expect(result.stdout).toContain(`The tool printed: ${TOOL_WORD}`);
  });

  it.skipIf(missing.has('codex'))('Codex prints the answer of a one-shot prompt; its first request is a streamed Responses call', async () => {
    const { result, up } = await runAgainst('codex', 'plain', 'Say the plain answer.');
    expect(result.stdout.trim()).toBe(PLAIN_ANSWER);
    const [first] = modelCalls(up);
    expect(first!.method).toBe('POST');
    expect(first!.path).toBe('/v1/responses');
    expect(first!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first!.headers.accept).toBe('text/event-stream');
    expect(first!.headers.originator).toBe('codex_exec');
    expect(first!.headers['user-agent']).toMatch(/^codex_exec\/0\.171\.0 /);
    expect(first!.headers['openai-beta']).toBeUndefined(); // only its websocket transport sends one
    expect(Object.keys(first!.headers)).toEqual(expect.arrayContaining(['x-codex-turn-metadata', 'session-id', 'x-client-request-id']));
    expect(Object.keys(first!.body).sort()).toEqual(['client_metadata', 'include', 'input', 'model', 'parallel_tool_calls', 'prompt_cache_key', 'reasoning', 'store', 'stream', 'tool_choice', 'tools']);
    expect(first!.body).toMatchObject({ model: MODELS.codex, stream: true, store: false, include: ['reasoning.encrypted_content'], tool_choice: 'auto' });
    // No top-level "instructions": they come as developer messages in input.
    expect(first!.body.input[0]).toMatchObject({ type: 'message', role: 'developer' });
    // Tool types beyond "function": the gateway must forward them untouched.
    expect(first!.body.tools.map((t: any) => t.type)).toEqual(expect.arrayContaining(['function', 'namespace', 'web_search']));
    expect(JSON.parse(first!.headers['x-codex-turn-metadata'] as string).analytics_enabled).toBe(false);
  });

  it.skipIf(missing.has('codex'))('Codex runs exec_command for the model and quotes its result', async () => {
    const { result, up } = await runAgainst('codex', 'tool', 'Run the shell command, then tell me what it printed.');
    const [first, second] = modelCalls(up);
    expect(first!.answered).toBe('tool');
    expect(first!.body.tools.map((t: any) => t.name)).toContain('exec_command'); // arguments {"cmd": "..."}
    const [call, output] = second!.body.input.slice(-2);
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: `echo ${TOOL_WORD}` }) });
    expect(output).toMatchObject({ type: 'function_call_output', call_id: call.call_id });
    expect(output.output).toContain(TOOL_WORD);
    expect(result.stdout).toContain(TOOL_WORD);
    expect(result.stdout).toContain('The tool printed:');
  });

  it.skipIf(missing.has('gemini-cli'))('Gemini CLI prints the answer of a one-shot prompt; its first request is streamGenerateContent under /gemini', async () => {
    const { result, up } = await runAgainst('gemini-cli', 'plain', 'Say the plain answer.');
    expect(result.stdout.trim()).toBe(PLAIN_ANSWER);
    const [first] = modelCalls(up);
    expect(first!.method).toBe('POST');
    expect(first!.path).toBe(`/gemini/v1beta/models/${MODELS['gemini-cli']}:streamGenerateContent?alt=sse`);
    expect(first!.headers['x-goog-api-key']).toBe(API_KEY);
    expect(first!.headers['x-goog-api-client']).toMatch(/^google-genai-sdk\//);
    expect(first!.headers['user-agent']).toMatch(/^GeminiCLI[^/]*\/0\.61\.0\//);
    expect(Object.keys(first!.body).sort()).toEqual(['contents', 'generationConfig', 'systemInstruction', 'tools']);
    expect(first!.body.generationConfig).toMatchObject({ thinkingConfig: { includeThoughts: true } });
    // Declarations carry JSON Schema as parametersJsonSchema, not the OpenAPI-subset "parameters".
    const declarations = first!.body.tools.flatMap((t: any) => t.functionDeclarations);
    for (const f of declarations) expect(Object.keys(f).sort()).toEqual(['description', 'name', 'parametersJsonSchema']);
    // Without --yolo a one-shot run does not offer its shell tool at all.
    expect(declarations.map((f: any) => f.name)).not.toContain('run_shell_command');
  });

  it.skipIf(missing.has('gemini-cli'))('Gemini CLI runs run_shell_command for the model and quotes its result', async () => {
    const { result, up } = await runAgainst('gemini-cli', 'tool', 'Run the shell command, then tell me what it printed.');
    const [first, second] = modelCalls(up);
    expect(first!.answered).toBe('tool');
    const [call, response] = second!.body.contents.slice(-2);
    // The CLI gives the call an id (our reply had none) and answers with the same id.
    expect(call.parts[0].functionCall).toMatchObject({ name: 'run_shell_command', args: { command: `echo ${TOOL_WORD}` } });
    expect(response.parts[0].functionResponse).toMatchObject({ name: 'run_shell_command', id: call.parts[0].functionCall.id });
    expect(response.parts[0].functionResponse.response.output).toContain(TOOL_WORD);
    expect(result.stdout).toContain(TOOL_WORD);
  });

  // Retries are off in the runners: a refusal (the gateway's 401, 402, 429...) ends the run at once
  // with the upstream's message, instead of minutes of backoff.
  for (const name of ['claude-code', 'codex', 'gemini-cli'] as const) it.skipIf(missing.has(name))(`${name} stops at a refused request and shows its message`, async () => {
    const { result, up } = await runAgainst(name, 'plain', 'Say the plain answer.', 401);
    expect(up.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(result.stdout + result.stderr).toContain(FAILURE_MESSAGE);
  });
});
