// The 400s of translation: each names the field a target cannot express, or the field of a body that is
// not of its format.
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { InvalidTextField, UntranslatableField, type WireFormat } from '../src/core/text/index.ts';

type J = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const to = (from: WireFormat, body: unknown, target: WireFormat): J => FORMATS[target].encodeRequest(FORMATS[from].decodeRequest(body, 'm'), 't');
const chat = (extra: J, messages: J[] = [{ role: 'user', content: 'hi' }]) => ({ model: 'g', messages, ...extra });
const msgs = (extra: J, messages: J[] = [{ role: 'user', content: 'hi' }]) => ({ model: 'c', max_tokens: 100, messages, ...extra });

describe('400s that name the field', () => {
  const untranslatable: Array<[string, WireFormat, unknown, WireFormat, string]> = [
    ['stop sequences on the Responses API', 'chat', chat({ stop: ['END'] }), 'responses', 'stop'],
    ['JSON mode without a schema on messages', 'chat', chat({ response_format: { type: 'json_object' } }), 'messages', 'response_format'],
    ['an image type Anthropic does not take', 'gemini', { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/bmp', data: 'AA==' } }] }] }, 'messages', 'messages[0].content[0].source'],
    ['a document by URL on chat', 'messages', msgs({}, [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }] }]), 'chat', 'messages[0].content[0].source'],
    ['an OpenAI file id on messages', 'chat', chat({}, [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }]), 'messages', 'messages[0].content[0].source'],
    ['a URL Gemini cannot type', 'messages', msgs({}, [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/img' } }] }]), 'gemini', 'messages[0].content[0].source'],
    // Tools run by a vendor: decoded (a channel of their own format gets them as they came), refused where translated.
    ['an OpenAI hosted tool', 'responses', { model: 'g', input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'code_interpreter', container: { type: 'auto' } }] }, 'messages', 'tools[1].type'],
    ['web search, for chat completions (it has none)', 'responses', { model: 'g', input: 'x', tools: [{ type: 'web_search' }] }, 'chat', 'tools[0].type'],
    ['an Anthropic server tool', 'messages', msgs({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'chat', 'tools[0]'],
    ['a Google tool', 'gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ codeExecution: {} }] }, 'responses', 'tools[0].codeExecution'],
    ['a tool result whose call is unknown, for Gemini', 'chat', chat({}, [{ role: 'tool', tool_call_id: 'zz', content: 'r' }]), 'gemini', 'messages[0].content[0].callId'],
    // History only the caller's format has: decoded (an upstream of that format gets the body as it came), refused where translated.
    ['a Responses item kind of its own', 'responses', { model: 'g', input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] }, 'messages', 'input[0].type'],
    ['an Anthropic server tool block in the history', 'messages', msgs({}, [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }] }]), 'responses', 'messages[1].content[0].type'],
    ['a Gemini code execution part', 'gemini', { contents: [{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: '1' } }] }] }, 'chat', 'contents[0].parts[0].executableCode'],
  ];
  it.each(untranslatable)('%s', (_what, from, body, target, field) => {
    const err = (() => { try { to(from, body, target); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(UntranslatableField);
    expect((err as UntranslatableField).field).toBe(field);
  });

  const notTranslatable: Array<[string, WireFormat, unknown, string]> = [
    ['several choices', 'chat', chat({ n: 2 }), 'n'],
    ['audio input', 'chat', chat({}, [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }]), 'messages[0].content[0]'],
    ['image output from Gemini', 'gemini', { contents: [], generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, 'generationConfig.responseModalities'],
    ['an item reference the route did not resolve from the stored answers', 'responses', { model: 'g', input: [{ type: 'item_reference', id: 'x' }] }, 'input[0].id'],
  ];
  it.each(notTranslatable)('%s', (_what, from, body, field) => {
    const err = (() => { try { FORMATS[from].decodeRequest(body); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(UntranslatableField);
    expect((err as UntranslatableField).field).toBe(field);
  });

  const invalid: Array<[WireFormat, unknown, string]> = [
    ['messages', msgs({}, [{ role: 'tool', content: 'x' }]), 'messages[0].role'],
    ['messages', { model: 'c', messages: 'hi' }, 'messages'],
    ['chat', chat({}, [{ role: 'user', content: 7 }]), 'messages[0].content'],
    ['chat', { messages: [] }, 'model'],
    ['responses', { model: 'g', input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id'],
    ['responses', { model: 'g', input: 'x', text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    ['gemini', { contents: {} }, 'contents'],
    ['gemini', { contents: [], tools: [{ functionDeclarations: [{ name: 'f', parameters: JSON.parse('{"items":'.repeat(200) + '{}' + '}'.repeat(200)) }] }] }, 'tools[0].functionDeclarations[0].parameters'],
    ['gemini', { contents: [{ role: 'user', parts: [{ inlineData: { data: 'AA' } }] }] }, 'contents[0].parts[0].inlineData.mimeType'],
  ];
  it.each(invalid)('%s body not of its format: %j names %s', (f, body, field) => {
    const err = (() => { try { FORMATS[f].decodeRequest(body); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(InvalidTextField);
    expect((err as InvalidTextField).field).toBe(field);
  });
});
