import { describe, expect, it } from 'vitest';
import { MESSAGES, OPENAI, useTextChannels } from './support/text-channels.ts';

// History only one format has (Claude Code's web searches: server_tool_use and web_search_tool_result
// blocks; Codex's: web_search_call items) goes to an upstream of that format as it came, and is a 400
// naming it where the call would be translated.

const s = useTextChannels();
const search = [
  { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } },
  { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.com', title: 'x', encrypted_content: 'abc' }] },
  { type: 'text', text: 'Here.' },
];
const messagesBody = (model: string) => ({ model, max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'news?' }, { role: 'assistant', content: search }, { role: 'user', content: 'more' }] });
const responsesBody = (model: string) => ({ model, tools: [{ type: 'web_search' }], input: [
  { role: 'user', content: 'news?' },
  { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Here.' }] },
  { role: 'user', content: 'more' },
] });

describe('history only the caller\'s format has', () => {
  it('reaches an upstream of that format as it came', async () => {
    const m = await s.t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...s.auth, 'anthropic-version': '2023-06-01' }, payload: messagesBody(MESSAGES) });
    expect(m.statusCode, m.body).toBe(200);
    expect(s.fakes.messages.requests.at(-1)!.body.messages[1].content).toEqual(search);
    const r = await s.t.app.inject({ method: 'POST', url: '/v1/responses', headers: s.auth, payload: responsesBody(OPENAI) });
    expect(r.statusCode, r.body).toBe(200);
    expect(s.fakes.openai.requests.at(-1)!.body.input[1]).toMatchObject({ type: 'web_search_call', id: 'ws_1' });
  });

  it('is a 400 naming it where the call is translated', async () => {
    const m = await s.t.app.inject({ method: 'POST', url: '/v1/messages', headers: { ...s.auth, 'anthropic-version': '2023-06-01' }, payload: { ...messagesBody(OPENAI), tools: undefined } });
    expect(m.statusCode).toBe(400);
    expect(m.json().error.message).toContain('messages[1].content[0].type');
    const r = await s.t.app.inject({ method: 'POST', url: '/v1/responses', headers: s.auth, payload: { ...responsesBody(MESSAGES), tools: undefined } });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.message).toContain('input[1].type');
  });
});
