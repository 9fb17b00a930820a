import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from './harness.ts';
import type { AgentName } from './support/agents.ts';
import { installedAgents, MODEL, modelCalls, runThroughGateway, startAgentsGateway, UPSTREAM_MODEL, usageRows, type AgentsGateway } from './support/agents-gateway.ts';
import type { ProxiedRequest } from './support/recording-proxy.ts';

// Issue 33: the three coding agents run a one-shot prompt THROUGH THE GATEWAY and print its answer,
// on the simulator and on a channel of their own vendor's format in front of that vendor's strict
// fake. On the same-format route the gateway forwards the agent's body unchanged but for the model
// (the channel's model_mapping), with the beta headers unchanged: a recording proxy between agent
// and gateway shows what the agent sent, the fake what arrived. Tool round trips: agents-gateway-tools.

const missing = await installedAgents();
let gw: AgentsGateway;
beforeAll(async () => { gw = await startAgentsGateway(); });
afterAll(async () => gw?.close());

const PLAIN = 'gw-plain-answer from the fake';
const plainScript = () => [{ type: 'text' as const, text: PLAIN }];

/** Every model call the agent made reached the fake unchanged but for the model; returns the calls. */
function forwardedUnchanged(calls: ProxiedRequest[], fake: { requests: { path: string; headers: Record<string, unknown>; body: any }[] }, vendorModel: string | undefined, headers: string[]) {
  expect(calls.length).toBeGreaterThan(0);
  expect(fake.requests).toHaveLength(calls.length);
  for (const call of calls) {
    const expected = vendorModel === undefined ? call.body : { ...call.body, model: vendorModel };
    const arrived = fake.requests.find((r) => JSON.stringify(r.body) === JSON.stringify(expected)) ?? fake.requests[calls.indexOf(call)]!;
    expect(arrived.body).toStrictEqual(expected);
    for (const h of headers) expect(arrived.headers[h], h).toBe(call.headers[h]);
  }
}

async function billedOk(userId: string, calls: number, model: string) {
  const rows = await usageRows(gw, userId, calls);
  expect(rows.length).toBeGreaterThanOrEqual(calls);
  for (const row of rows) expect(row).toMatchObject({ status: 'ok', model });
  expect(rows.some((r) => Number(r.cost) > 0)).toBe(true);
}

describe(`coding agents through the gateway, one-shot [${backendName}]`, { timeout: 150_000 }, () => {
  const simulatorCases: [AgentName, string][] = [['claude-code', 'Say hello.'], ['codex', 'Say hello.'], ['gemini-cli', 'Say hello.']];
  for (const [name, prompt] of simulatorCases) {
    it.skipIf(missing.has(name))(`${name} prints the simulator's answer`, async () => {
      const { result, proxy, account, why } = await runThroughGateway(gw, name, { model: MODEL.simulator, prompt });
      expect(result.stdout, why).toContain(`Simulated reply from ${MODEL.simulator}`);
      const calls = modelCalls(proxy);
      expect(calls.map((c) => c.status), why).toEqual(calls.map(() => 200));
      await billedOk(account.user.id, calls.length, MODEL.simulator);
    });
  }

  it.skipIf(missing.has('claude-code'))('Claude Code on a messages channel: the messages fake gets its body unchanged but for the model, and its beta headers', async () => {
    gw.messages.requests.length = 0;
    gw.messages.script = plainScript;
    const { result, proxy, account, why } = await runThroughGateway(gw, 'claude-code', { model: MODEL.messages, prompt: 'Say the plain answer.' });
    expect(result.stdout.trim(), why).toBe(PLAIN);
    const calls = modelCalls(proxy);
    expect(calls[0]!.path).toBe('/v1/messages?beta=true');
    expect(String(calls[0]!.headers['anthropic-beta'])).toContain('claude-code-20250219');
    forwardedUnchanged(calls, gw.messages, UPSTREAM_MODEL.messages, ['anthropic-version', 'anthropic-beta']);
    await billedOk(account.user.id, calls.length, MODEL.messages);
  });

  it.skipIf(missing.has('claude-code'))("Claude Code's WebSearch on a messages channel: its request offering Anthropic's web_search server tool is forwarded unchanged too", async () => {
    gw.messages.requests.length = 0;
    // The main loop calls WebSearch; Claude Code then asks the model with the web_search server tool
    // alone (the vendor runs the search); its answer comes back to the main loop as the tool result.
    gw.messages.script = (body: any) => {
      const tools = body.tools ?? [];
      if (tools.some((t: any) => String(t.type).startsWith('web_search_'))) return [{ type: 'text', text: 'gw-search-result 42' }];
      const last = body.messages.at(-1);
      const result = Array.isArray(last?.content) ? last.content.find((b: any) => b.type === 'tool_result') : undefined;
      if (result) return [{ type: 'text', text: `Found: ${/gw-search-result \d+/.exec(JSON.stringify(result.content))?.[0]}` }];
      if (tools.some((t: any) => t.name === 'WebSearch')) return [{ type: 'tool_use', name: 'WebSearch', input: { query: 'gw question' } }];
      return [{ type: 'text', text: 'no search tool' }];
    };
    const { result, proxy, account, why } = await runThroughGateway(gw, 'claude-code', { model: MODEL.messages, prompt: 'Search the web for the answer.', args: ['--allowedTools', 'WebSearch'] });
    expect(result.stdout.trim(), why).toBe('Found: gw-search-result 42');
    const calls = modelCalls(proxy);
    expect(calls.map((c) => c.body.tools.map((t: any) => t.type ?? 'custom')), why).toContainEqual(['web_search_20250305']);
    forwardedUnchanged(calls, gw.messages, UPSTREAM_MODEL.messages, ['anthropic-version', 'anthropic-beta']);
    await billedOk(account.user.id, calls.length, MODEL.messages);
  });

  it.skipIf(missing.has('codex'))('Codex on an openai channel: the Responses fake gets its body unchanged but for the model', async () => {
    gw.openai.requests.length = 0;
    gw.openai.script = plainScript;
    const { result, proxy, account, why } = await runThroughGateway(gw, 'codex', { model: MODEL.openai, prompt: 'Say the plain answer.' });
    expect(result.stdout.trim(), why).toBe(PLAIN);
    const calls = modelCalls(proxy);
    expect(calls[0]!.path).toBe('/v1/responses');
    // Beside function tools, a namespace tool (its sub-agent functions) and OpenAI's hosted web_search: forwarded as sent.
    expect(calls[0]!.body.tools.map((t: any) => t.type)).toEqual(expect.arrayContaining(['function', 'namespace', 'web_search']));
    expect(gw.openai.requests.every((r) => r.path === '/v1/responses')).toBe(true);
    forwardedUnchanged(calls, gw.openai, UPSTREAM_MODEL.openai, ['openai-beta']);
    await billedOk(account.user.id, calls.length, MODEL.openai);
  });

  it.skipIf(missing.has('gemini-cli'))('Gemini CLI on a gemini channel: the Gemini fake gets its body unchanged, the model in its path', async () => {
    gw.gemini.requests.length = 0;
    gw.gemini.script = plainScript;
    const { result, proxy, account, why } = await runThroughGateway(gw, 'gemini-cli', { model: MODEL.gemini, prompt: 'Say the plain answer.' });
    expect(result.stdout.trim(), why).toBe(PLAIN);
    const calls = modelCalls(proxy);
    expect(calls[0]!.path).toBe(`/gemini/v1beta/models/${MODEL.gemini}:streamGenerateContent?alt=sse`);
    // Gemini names the model in the path, never the body.
    expect(gw.gemini.requests.map((r) => r.path)).toEqual(calls.map((c) => c.path.replace(`/gemini/v1beta/models/${MODEL.gemini}:`, `/v1beta/models/${UPSTREAM_MODEL.gemini}:`)));
    forwardedUnchanged(calls, gw.gemini, undefined, []);
    await billedOk(account.user.id, calls.length, MODEL.gemini);
  });
});
