import { expect } from 'vitest';
import { adminHeaders, createTestApp, seedAccount, type TestApp } from '../harness.ts';
import { AGENTS, installAgent, runClaudeCode, runCodex, runGeminiCli, type AgentName, type AgentResult, type AgentRunOptions } from './agents.ts';
import { startFakeGeminiText, type FakeGeminiText } from './fake-gemini-text.ts';
import { startFakeMessagesText, type FakeMessagesText } from './fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './fake-openai-text.ts';
import { startRecordingProxy, type ProxiedRequest, type RecordingProxy } from './recording-proxy.ts';

// The gateway between the three coding agents and the vendors' strict fakes (issue 33): one
// gateway listening on a port, one channel per vendor format, each serving one catalogue model under
// the vendor's own name (model_mapping), and the simulator keeping one model. Each agent run goes
// through a recording reverse proxy (recording-proxy.ts), so a test compares what the agent sent
// with what the fake received.

/** Which catalogue model each route serves. */
export const MODEL = { simulator: 'chatgen-4-sonnet', messages: 'chatgen-4-haiku', openai: 'textgen-2.5-pro', gemini: 'textgen-2.5-flash' } as const;
/** The vendor's name for it, behind the channel (model_mapping). */
export const UPSTREAM_MODEL = { messages: 'claude-upstream-test', openai: 'gpt-upstream-test', gemini: 'gemini-upstream-test' } as const;

export const TOOL_WORD = 'gw-tool-ok';

export interface AgentsGateway {
  t: TestApp;
  url: string;
  messages: FakeMessagesText;
  openai: FakeOpenAIText;
  gemini: FakeGeminiText;
  close(): Promise<void>;
}

export async function startAgentsGateway(): Promise<AgentsGateway> {
  const t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  const messages = await startFakeMessagesText('sk-fake-messages', [UPSTREAM_MODEL.messages]);
  const openai = await startFakeOpenAIText('sk-fake-openai', [UPSTREAM_MODEL.openai]);
  const gemini = await startFakeGeminiText('fake-gemini-key', [UPSTREAM_MODEL.gemini]);
  for (const [type, fake] of [['messages', messages], ['openai', openai], ['gemini', gemini]] as const) {
    const payload = { name: type, type, base_url: fake.url, secret: fake.key, models: [MODEL[type]], model_mapping: { [MODEL[type]]: UPSTREAM_MODEL[type] }, priority: 10 };
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload });
    expect(res.statusCode, res.body).toBe(201);
  }
  // Only the fakes serve their models: take them off the simulator channel.
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const taken = new Set<string>([MODEL.messages, MODEL.openai, MODEL.gemini]);
  const patched = await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !taken.has(m)) } });
  expect(patched.statusCode, patched.body).toBe(200);
  return {
    t, url, messages, openai, gemini,
    async close() {
      await Promise.all([messages.close(), openai.close(), gemini.close()]);
      await t.close();
    },
  };
}

/** Each agent's base-URL setting, given the gateway's root (or the proxy standing for it). */
const BASES: Record<AgentName, (root: string) => string> = {
  'claude-code': (root) => root, // ANTHROPIC_BASE_URL: it posts to /v1/messages?beta=true
  codex: (root) => `${root}/v1`, // Codex appends /responses
  'gemini-cli': (root) => `${root}/gemini`, // GOOGLE_GEMINI_BASE_URL: /v1beta/models/{m}:streamGenerateContent
};

const RUNNERS: Record<AgentName, (o: AgentRunOptions) => Promise<AgentResult>> = { 'claude-code': runClaudeCode, codex: runCodex, 'gemini-cli': runGeminiCli };

/** Installs the three agents (cached); under CI=true a failed install throws, otherwise the agent's tests are skipped. */
export async function installedAgents(): Promise<Set<AgentName>> {
  const installs = await Promise.all((Object.keys(AGENTS) as AgentName[]).map(async (name) => [name, await installAgent(name)] as const));
  for (const [, r] of installs) if ('skip' in r) console.warn(`agent tests skipped (CI is not "true"): ${r.skip}`);
  return new Set(installs.filter(([, r]) => 'skip' in r).map(([name]) => name));
}

/** The agents' model calls as the proxy saw them (not token counts, model lists or probes). */
export const modelCalls = (proxy: RecordingProxy): ProxiedRequest[] =>
  proxy.requests.filter((r) => r.method === 'POST' && /\/v1\/messages(\?|$)|\/v1\/responses(\?|$)|:(stream)?[gG]enerateContent(\?|$)/.test(r.path));

/**
 * Runs an agent one-shot through a recording proxy in front of the gateway, with a fresh funded
 * key; the run must end well and reach nothing but the gateway.
 */
export async function runThroughGateway(gw: AgentsGateway, name: AgentName, o: { model: string; prompt: string; allowTools?: boolean; args?: string[] }) {
  const account = await seedAccount(gw.t.ctx, 100);
  const proxy = await startRecordingProxy(gw.url);
  try {
    const result = await RUNNERS[name]({ baseUrl: BASES[name](proxy.url), apiKey: account.key, model: o.model, prompt: o.prompt, allowTools: o.allowTools, args: o.args, proxyUrl: proxy.url, timeoutMs: 90_000 });
    const why = `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr.slice(-3000)}\nrequests: ${proxy.requests.map((r) => `${r.method} ${r.path} -> ${r.status}`).join(', ')}`;
    if (process.env.GW_AGENT_DEBUG) console.log(`[${name}] ${why}`); // what the agent printed and asked, on a passing run too
    expect(result.code, why).toBe(0);
    expect(result.timedOut, why).toBe(false);
    expect(proxy.outbound, why).toEqual([]);
    return { result, proxy, account, why };
  } finally {
    await proxy.close();
  }
}

/** The account's usage rows once the gateway wrote them (billing settles just after the answer ends). */
export async function usageRows(gw: AgentsGateway, userId: string, atLeast: number) {
  const read = () => gw.t.ctx.db.selectFrom('usage').select(['model', 'status', 'cost', 'input_tokens', 'output_tokens']).where('user_id', '=', userId).execute();
  for (let i = 0; i < 100 && (await read()).length < atLeast; i++) await new Promise((r) => setTimeout(r, 50));
  return read();
}
