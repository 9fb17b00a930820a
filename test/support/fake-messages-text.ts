import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The messages API (POST /v1/messages), strict where the vendor's is. From its API reference and
// the official SDK's types (node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts:
// MessageCreateParamsBase, Message, RawMessageStreamEvent, Usage):
// - the key: `x-api-key` (or `Authorization: Bearer`, which the SDK on npm sends); none is 401
//   authentication_error "x-api-key header is required", a wrong one 401 "invalid x-api-key";
// - `anthropic-version` is required (400 "anthropic-version: header is required"), a dated value;
// - errors are {type: "error", error: {type, message}} with a `request-id` header;
// - body fields: model, messages, max_tokens required; an unknown field is 400 "<field>: Extra
//   inputs are not permitted"; roles user|assistant; content a string or blocks (text, image with a
//   base64 source); temperature and top_p 0-1; stop_sequences an array of strings;
// - a stream is message_start, content_block_start, ping, content_block_delta..., content_block_stop,
//   message_delta (stop_reason, usage.output_tokens), message_stop, each as `event:` + `data:`.
// Usage is the fake's own count (`usage`, with the prompt-cache classes the vendor reports beside
// input_tokens). `cut: 'after-start'` breaks a stream's connection right after message_start;
// `delayMs` answers that much later; `stopped` counts calls whose caller hung up before the answer
// was whole (the gateway stopping the upstream call).

const FIELDS = new Set(['model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_k', 'top_p', 'tools', 'tool_choice', 'thinking', 'service_tier', 'container', 'mcp_servers', 'context_management']);
const VERSION = /^\d{4}-\d{2}-\d{2}$/;

export interface FakeMessagesText {
  url: string;
  key: string;
  models: string[];
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
  mode: 'ok' | 'down';
  cut?: 'after-start';
  delayMs: number;
  /** Calls whose whole request arrived (counted before `delayMs`). */
  received: number;
  stopped: number;
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(readonly status: number, readonly type: string, message: string) {
    super(message);
  }
}
const invalid = (message: string) => new Refusal(400, 'invalid_request_error', message);

function check(fake: FakeMessagesText, body: any): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('Input should be a valid dictionary');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown) throw invalid(`${unknown}: Extra inputs are not permitted`);
  for (const field of ['model', 'messages', 'max_tokens']) if (body[field] === undefined) throw invalid(`${field}: Field required`);
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw invalid('max_tokens: Input should be a valid integer greater than 0');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid('messages: at least one message is required');
  let text = '';
  body.messages.forEach((m: any, i: number) => {
    if (m?.role !== 'user' && m?.role !== 'assistant') throw invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks)) throw invalid(`messages.${i}.content: Input should be a valid list`);
    for (const block of blocks) {
      if (block?.type === 'text' && typeof block.text === 'string') {
        if (m.role === 'user') text = block.text;
      } else if (!(block?.type === 'image' && block.source?.type === 'base64' && typeof block.source.data === 'string' && typeof block.source.media_type === 'string')) {
        throw invalid(`messages.${i}.content: unsupported block`);
      }
    }
  });
  for (const field of ['temperature', 'top_p']) if (body[field] !== undefined && !(body[field] >= 0 && body[field] <= 1)) throw invalid(`${field}: Input should be less than or equal to 1`);
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s: unknown) => typeof s === 'string'))) throw invalid('stop_sequences: Input should be a valid list');
  if (!fake.models.includes(body.model)) throw new Refusal(404, 'not_found_error', `model: ${body.model}`);
  return `echo: ${text}`;
}

export async function startFakeMessagesText(key = 'sk-fake-messages-key', models = ['messages-fake-small']): Promise<FakeMessagesText> {
  const fake = { key, models, requests: [], usage: { input_tokens: 11, output_tokens: 3 }, mode: 'ok', delayMs: 0, received: 0, stopped: 0 } as unknown as FakeMessagesText;
  let served = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    res.on('close', () => {
      if (!res.writableFinished) fake.stopped++;
    });
    req.on('end', () => {
      fake.received++;
      void later(fake.delayMs).then(() => {
        if (res.destroyed) return;
        const requestId = `req_fake${++served}`;
        const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId }).end(JSON.stringify(body));
        try {
          let body: any;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            throw invalid('There was an error parsing the body of your request');
          }
          fake.requests.push({ path: req.url ?? '', headers: req.headers, body });
          const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
          const given = req.headers['x-api-key'] ?? bearer;
          if (!given) throw new Refusal(401, 'authentication_error', 'x-api-key header is required');
          if (given !== fake.key) throw new Refusal(401, 'authentication_error', 'invalid x-api-key');
          const version = req.headers['anthropic-version'];
          if (version === undefined) throw invalid('anthropic-version: header is required');
          if (!VERSION.test(String(version))) throw invalid(`anthropic-version: invalid version ${version}`);
          if (req.method !== 'POST' || req.url !== '/v1/messages') throw new Refusal(404, 'not_found_error', 'Not Found');
          if (fake.mode === 'down') throw new Refusal(529, 'overloaded_error', 'Overloaded');
          const text = check(fake, body);
          const id = `msg_fake${served}`;
          if (!body.stream) {
            return send(200, { id, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: usageOf(fake) });
          }
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': requestId });
          const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
          event('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usageOf(fake), output_tokens: 1 } } });
          // Once message_start is on the wire: the connection breaks.
          if (fake.cut === 'after-start') return void res.write('', () => res.socket?.destroy());
          event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
          event('ping', { type: 'ping' });
          for (const word of text.split(/(?<= )/)) event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } });
          event('content_block_stop', { type: 'content_block_stop', index: 0 });
          event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: fake.usage.output_tokens } });
          event('message_stop', { type: 'message_stop' });
          res.end();
        } catch (err) {
          if (!(err instanceof Refusal)) return send(500, { type: 'error', error: { type: 'api_error', message: String(err) } });
          send(err.status, { type: 'error', error: { type: err.type, message: err.message } });
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const usageOf = (fake: FakeMessagesText) => ({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...fake.usage });
