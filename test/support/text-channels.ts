import { afterAll, beforeAll, expect } from 'vitest';
import { adminHeaders, createTestApp, seedAccount, type TestApp } from '../harness.ts';
import { startFakeMessagesText, type FakeMessagesText } from './fake-messages-text.ts';
import { startFakeOpenAIText, type FakeOpenAIText } from './fake-openai-text.ts';

// One model per kind of channel a text call can take: the simulator (translated, in process), an
// `openai` channel (same format for chat and Responses calls) and a `messages` one (translated over
// HTTP). The simulator gives up the two models the fakes serve.

export const SIMULATED = 'textgen-2.5-flash';
export const OPENAI = 'textgen-2.5-pro';
export const MESSAGES = 'chatgen-4-sonnet';

export interface TextChannels {
  openai: FakeOpenAIText;
  messages: FakeMessagesText;
  close(): Promise<void>;
}

export async function startTextChannels(t: TestApp): Promise<TextChannels> {
  const openai = await startFakeOpenAIText('sk-channels-openai', [OPENAI]);
  const messages = await startFakeMessagesText('sk-channels-messages', [MESSAGES]);
  const channels = [
    { name: 'openai', type: 'openai', base_url: openai.url, secret: openai.key, models: [OPENAI] },
    { name: 'messages', type: 'messages', base_url: messages.url, secret: messages.key, models: [MESSAGES] },
  ];
  for (const payload of channels) {
    const res = await t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { ...payload, priority: 10 } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const simulator = (await t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data.find((c: any) => c.type === 'simulator');
  const patched = await t.app.inject({ method: 'PATCH', url: `/admin/channels/${simulator.id}`, headers: adminHeaders, payload: { models: simulator.models.filter((m: string) => m !== OPENAI && m !== MESSAGES) } });
  expect(patched.statusCode, patched.body).toBe(200);
  return { openai, messages, close: () => Promise.all([openai.close(), messages.close()]).then(() => undefined) };
}

/** A file's app with the three channels and a funded account, opened before its tests and closed after. */
export interface TextChannelsSuite {
  t: TestApp;
  fakes: TextChannels;
  /** The funded account's key, as an Authorization header. */
  auth: Record<string, string>;
}

/** Opens a TextChannelsSuite for the calling test file; its fields are set once beforeAll has run. */
export function useTextChannels(dollars = 10): TextChannelsSuite {
  const suite = {} as TextChannelsSuite;
  beforeAll(async () => {
    suite.t = await createTestApp();
    suite.fakes = await startTextChannels(suite.t);
    suite.auth = (await seedAccount(suite.t.ctx, dollars)).auth;
  });
  afterAll(async () => {
    await suite.fakes?.close();
    await suite.t?.close();
  });
  return suite;
}

/** The JSON events of an SSE body (`data: [DONE]` left out). */
export const sseData = (body: string): any[] =>
  body.split('\n').filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]').map((line) => JSON.parse(line.slice(6)));
