import { expect } from 'vitest';
import { adminHeaders, createTestApp, seedAccount, type TestApp } from '../harness.ts';
import { startFakeGeminiText, type FakeGeminiText } from './fake-gemini-text.ts';
import { startFakeMessagesText, type FakeMessagesText } from './fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './fake-openai-text.ts';
import type { ScriptedPart } from './fake-script.ts';

// The gateway the agent frameworks (Vercel AI SDK, LangChain JS) are driven through: one model on
// the simulator and one on each strict vendor fake, so a test picks its route by the model it names
// (a framework speaking its own vendor's format to that vendor's fake is the same-format route, any
// other pairing translates). The fakes answer as an agent's model would: a tool call while the tool's
// result is not in the conversation, then a text quoting it; JSON when the request asks for it.

export const SIM = 'chatgen-4-haiku';
/** Our model → the fake serving it (and its own model name). */
export const ON_FAKE = { openai: 'chatgen-4-sonnet', messages: 'textgen-2.5-pro', gemini: 'textgen-2.5-flash' } as const;

export const ASK = 'What is the weather in Lyon? [sim:tool=get_weather {"city":"Lyon"}]';
export const TOOL_RESULT = 'sunny, 21 C';
/** What every fake fills a structured answer (or a forced tool's arguments) with. */
export const FAKE_OBJECT = { city: 'Lyon', temperature: 21 };

/** The fake serving one of our models (undefined for the simulator's). */
export function fakeOf(gw: FrameworkGateway, model: string): { requests: { body: any }[] } | undefined {
  const type = (Object.keys(ON_FAKE) as (keyof typeof ON_FAKE)[]).find((k) => ON_FAKE[k] === model);
  return type && gw.fakes[type];
}

export interface FrameworkGateway {
  t: TestApp;
  base: string;
  key: string;
  fakes: { openai: FakeOpenAIText; messages: FakeMessagesText; gemini: FakeGeminiText };
  close(): Promise<void>;
}

export async function startFrameworkGateway(): Promise<FrameworkGateway> {
  const t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  const [openai, messages, gemini] = await Promise.all([startFakeOpenAIText(), startFakeMessagesText(), startFakeGeminiText()]);
  const fakes = { openai, messages, gemini };
  const theirs = { openai: 'gpt-fake-mini', messages: 'messages-fake-small', gemini: 'gemini-fake-flash' };
  for (const type of ['openai', 'messages', 'gemini'] as const) {
    fakes[type].script = agentScript;
    const ours = ON_FAKE[type];
    const payload = { name: `${type}-fake`, type, base_url: fakes[type].url, secret: fakes[type].key, models: [ours], model_mapping: { [ours]: theirs[type] }, priority: 10 };
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const taken = new Set<string>(Object.values(ON_FAKE));
  await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => !taken.has(m)) } });
  const key = (await seedAccount(t.ctx, 10)).key;
  return {
    t,
    base,
    key,
    fakes,
    async close() {
      await Promise.all([openai.close(), messages.close(), gemini.close()]);
      await t.close();
    },
  };
}

/** The tools a request offers, in any of the four formats. */
function toolNames(body: any): string[] {
  return (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ? t.functionDeclarations.map((d: any) => d.name) : [t.function?.name ?? t.name]));
}

/** The tool the request forces, if any (chat / Responses / messages / Gemini spellings). */
export function forcedTool(body: any): string | undefined {
  const choice = body.tool_choice;
  return choice?.function?.name ?? (choice?.type === 'tool' || choice?.type === 'function' ? choice.name : undefined) ?? body.toolConfig?.functionCallingConfig?.allowedFunctionNames?.[0];
}

/** Whether the request asks for JSON output (chat response_format, Responses text.format, messages output_config/output_format, Gemini). */
function wantsJson(body: any): boolean {
  return body.response_format?.type === 'json_schema' || body.text?.format?.type === 'json_schema' || Boolean(body.output_config?.format ?? body.output_format) || body.generationConfig?.responseMimeType === 'application/json';
}

/**
 * An agent's model, format-neutrally: the tool's result in the conversation → a text quoting it;
 * JSON output asked for → that JSON; get_weather offered or forced → call it for Lyon; another tool
 * (the frameworks' structured output through a forced tool) → call it with FAKE_OBJECT; else the echo.
 */
export function agentScript(body: any): ScriptedPart[] | undefined {
  if (JSON.stringify(body).includes(TOOL_RESULT)) return [{ type: 'text', text: `The tool says: ${TOOL_RESULT}.` }];
  if (wantsJson(body)) return [{ type: 'text', text: JSON.stringify(FAKE_OBJECT) }];
  const tools = toolNames(body);
  const called = forcedTool(body) ?? (tools.includes('get_weather') ? 'get_weather' : tools[0]);
  if (called === 'get_weather') return [{ type: 'tool_use', name: called, input: { city: 'Lyon' } }];
  if (called) return [{ type: 'tool_use', name: called, input: FAKE_OBJECT }];
  return undefined;
}
