import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, seedAccount } from './harness.ts';
import type { AgentName } from './support/agents.ts';
import { installedAgents, MODEL, runThroughGateway, startAgentsGateway, TOOL_WORD, usageRows, type AgentsGateway } from './support/agents-gateway.ts';
import type { ScriptedPart } from './support/fake-script.ts';

// Issue 33: tool round trips of the coding agents through the gateway. On translating routes
// (Claude Code on an openai channel: messages <-> chat completions; Codex on a messages channel:
// responses <-> messages) a scripted strict fake first calls the agent's shell tool running
// `echo gw-tool-ok`, then answers with text quoting the result the agent sent back, in the
// fake's own format. On the simulator the prompt's [sim:tool=NAME {args}] makes the call.

const missing = await installedAgents();
let gw: AgentsGateway;
beforeAll(async () => { gw = await startAgentsGateway(); });
afterAll(async () => gw?.close());

const COMMAND = `echo ${TOOL_WORD}`;
const PROMPT = 'Run the shell command, then tell me what it printed.';
const text = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? v.map((p) => text(p?.text ?? p?.content ?? p)).join('') : JSON.stringify(v ?? ''));

/** Chat completions: the tool message answered with text quoting it; else a call to Bash when offered. */
function chatScript(body: any): ScriptedPart[] {
  const last = body.messages?.at(-1);
  if (last?.role === 'tool') return [{ type: 'text', text: `The tool printed: ${text(last.content).trim()}` }];
  if ((body.tools ?? []).some((t: any) => t.function?.name === 'Bash')) return [{ type: 'tool_use', name: 'Bash', input: { command: COMMAND, description: 'Print a word' } }];
  return [{ type: 'text', text: 'nothing to run' }];
}

/** Messages: a tool_result answered with text quoting it; else a call to exec_command when offered. */
function messagesScript(body: any): ScriptedPart[] {
  const last = body.messages?.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: any) => b.type === 'tool_result') : undefined;
  if (result) return [{ type: 'text', text: `The tool printed: ${text(result.content).trim()}` }];
  if ((body.tools ?? []).some((t: any) => t.name === 'exec_command')) return [{ type: 'tool_use', name: 'exec_command', input: { cmd: COMMAND } }];
  return [{ type: 'text', text: 'nothing to run' }];
}

async function billedOk(userId: string, calls: number) {
  const rows = await usageRows(gw, userId, calls);
  expect(rows.length).toBeGreaterThanOrEqual(calls);
  for (const row of rows) expect(row.status).toBe('ok');
}

describe(`coding agents' tool round trips through the gateway [${backendName}]`, { timeout: 150_000 }, () => {
  it.skipIf(missing.has('claude-code'))('Claude Code on an openai channel (messages -> chat completions): runs Bash, the result goes back as a tool message', async () => {
    gw.openai.requests.length = 0;
    gw.openai.script = chatScript;
    const { result, account, why } = await runThroughGateway(gw, 'claude-code', { model: MODEL.openai, prompt: PROMPT, allowTools: true });
    const chats = gw.openai.requests.filter((r) => r.path === '/v1/chat/completions');
    const called = chats.find((r) => r.body.messages.at(-1).role !== 'tool' && (r.body.tools ?? []).some((t: any) => t.function?.name === 'Bash'));
    const answered = chats.find((r) => r.body.messages.at(-1).role === 'tool');
    expect(called, why).toBeDefined();
    expect(answered, why).toBeDefined();
    // The call the fake made comes back as the assistant's tool_calls, its result as a tool message with the same id.
    const [call, tool] = answered!.body.messages.slice(-2);
    expect(call).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'Bash' } }] });
    expect(JSON.parse(call.tool_calls[0].function.arguments)).toMatchObject({ command: COMMAND });
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: call.tool_calls[0].id });
    expect(text(tool.content)).toContain(TOOL_WORD);
    expect(result.stdout, why).toContain(`The tool printed: ${TOOL_WORD}`);
    await billedOk(account.user.id, 2);
  });

  it.skipIf(missing.has('codex'))('Codex on a messages channel (responses -> messages): runs exec_command, the result goes back as a tool_result block', async () => {
    gw.messages.requests.length = 0;
    gw.messages.script = messagesScript;
    // Codex as it comes: its hosted web_search goes to the messages channel as that API's own web search tool.
    const { result, account, why } = await runThroughGateway(gw, 'codex', { model: MODEL.messages, prompt: PROMPT, allowTools: true });
    const answered = gw.messages.requests.find((r) => (r.body.messages.at(-1).content ?? []).some?.((b: any) => b.type === 'tool_result'));
    expect(answered, why).toBeDefined();
    const [assistant, user] = answered!.body.messages.slice(-2);
    const use = assistant.content.find((b: any) => b.type === 'tool_use');
    expect(use).toMatchObject({ name: 'exec_command', input: { cmd: COMMAND } });
    const back = user.content.find((b: any) => b.type === 'tool_result');
    expect(back.tool_use_id).toBe(use.id);
    expect(text(back.content)).toContain(TOOL_WORD);
    expect(result.stdout, why).toContain(TOOL_WORD);
    expect(result.stdout, why).toContain('The tool printed:');
    await billedOk(account.user.id, 2);
  });

  // The simulator calls NAME when the last user turn says [sim:tool=NAME {args}] and NAME is offered,
  // then answers a turn bringing the result back with "Tool NAME returned: ...".
  const onSimulator: [AgentName, string, Record<string, string>][] = [
    ['claude-code', 'Bash', { command: COMMAND }],
    ['codex', 'exec_command', { cmd: COMMAND }],
    ['gemini-cli', 'run_shell_command', { command: COMMAND }],
  ];
  for (const [name, tool, args] of onSimulator) {
    it.skipIf(missing.has(name))(`${name} runs ${tool} for the simulator and prints its result`, async () => {
      const prompt = `Run the command. [sim:tool=${tool} ${JSON.stringify(args)}]`;
      const { result, account, why } = await runThroughGateway(gw, name, { model: MODEL.simulator, prompt, allowTools: true });
      expect(result.stdout, why).toContain(TOOL_WORD);
      expect(result.stdout, why).toMatch(/returned:/);
      await billedOk(account.user.id, 2);
    });
  }
});

describe(`a vendor's own tool on a translating route [${backendName}]`, () => {
  // What Codex sends by default (hosted web_search) on a messages channel: the messages API's own
  // web search tool (formats/web-search.ts), so Codex works there unchanged.
  it('a Responses call offering web_search to a messages channel offers the messages API its own web search tool', async () => {
    const account = await seedAccount(gw.t.ctx, 10);
    for (const stream of [false, true]) {
      // Over the port: a stream is read as a caller reads it.
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST', headers: { ...account.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL.messages, input: 'search the web', stream, tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }, { type: 'web_search', external_web_access: true }] }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).toContain(stream ? 'response.completed' : '"status":"completed"');
      expect(gw.messages.requests.at(-1)!.body.tools).toEqual([expect.objectContaining({ name: 'f' }), { type: 'web_search_20250305', name: 'web_search' }]);
    }
  });
});
