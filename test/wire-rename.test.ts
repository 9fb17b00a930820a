import { describe, expect, it } from 'vitest';
import { modelRenamer, responseNamed } from '../src/providers/wire-rename.ts';

// A forwarded stream names the model as the caller did (src/providers/wire-rename.ts): chat chunks in
// their bytes, Responses events through `response.model` only.

const renamed = (format: 'chat' | 'responses' | 'gemini', text: string, model = 'ours') => modelRenamer(format, model)(Buffer.from(text)).toString('utf8');

describe('stream model names', () => {
  it('chat: every chunk, spaced or not; text that merely says "model" is left alone', () => {
    const chunk = (model: string, content: string) => `data: {"id":"c1","object":"chat.completion.chunk","model":${model},"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}]}\n\n`;
    const upstream = chunk('"gpt-x-2025"', 'the "model": "gpt-x-2025" said') + chunk(' "gpt-x-2025"', 'model') + 'data: [DONE]\n\n';
    const out = renamed('chat', upstream);
    const datas = out.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    expect(datas.map((d) => d.model)).toEqual(['ours', 'ours']);
    expect(datas.map((d) => d.choices[0].delta.content)).toEqual(['the "model": "gpt-x-2025" said', 'model']);
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('chat: a chunk already named as the caller did goes on as the same bytes; a name needing escapes stays JSON', () => {
    const block = Buffer.from('data: {"model":"ours","choices":[]}\n\n');
    expect(modelRenamer('chat', 'ours')(block)).toBe(block);
    const odd = renamed('chat', 'data: {"model":"theirs","choices":[]}\n\n', 'a"b');
    expect(JSON.parse(odd.slice(6)).model).toBe('a"b');
  });

  it('responses: response.model set in the events that carry the response, LF or CRLF; a tool\'s own model kept', () => {
    const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', model: 'gpt-x-2025', tools: [{ type: 'image_generation', model: 'gpt-image-1' }], output: [] } };
    const delta = { type: 'response.output_text.delta', sequence_number: 1, delta: 'model' };
    for (const eol of ['\n', '\r\n']) {
      const text = [created, delta].map((d) => `event: ${d.type}${eol}data: ${JSON.stringify(d)}${eol}${eol}`).join('');
      const out = renamed('responses', text);
      const events = out.split(`${eol}${eol}`).filter(Boolean);
      expect(events).toHaveLength(2);
      expect(events[0]!.startsWith(`event: response.created${eol}data: `)).toBe(true);
      const data = JSON.parse(events[0]!.split(eol)[1]!.slice(6));
      expect(data.response).toMatchObject({ model: 'ours', tools: [{ model: 'gpt-image-1' }] });
      expect(events[1]).toBe(`event: response.output_text.delta${eol}data: ${JSON.stringify(delta)}`);
    }
  });

  it('gemini streams keep modelVersion (its whole answers do too); a stored Response is renamed', () => {
    const text = 'data: {"candidates":[],"modelVersion":"gemini-x-001"}\r\n\r\n';
    expect(renamed('gemini', text)).toBe(text);
    expect(responseNamed({ id: 'r', model: 'theirs' }, 'ours')).toEqual({ id: 'r', model: 'ours' });
    expect(responseNamed(null, 'ours')).toBeNull();
  });
});

describe('stream model names, unchanged', () => {
  it('responses: an event whose response already names the caller\'s model goes on as the same bytes', () => {
    const block = Buffer.from(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { model: 'ours', tools: [{ type: 'image_generation', model: 'gpt-image-1' }] } })}\n\n`);
    expect(modelRenamer('responses', 'ours')(block)).toBe(block);
  });
});
