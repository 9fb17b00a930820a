import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkMessages, invalid, Refusal } from './messages-check.ts';
import { halves, pieces, type Script, type ScriptedPart } from './fake-script.ts';

// The messages API (POST /v1/messages), strict where the vendor's is. From its API reference and
// the official SDK's types (node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts:
// MessageCreateParamsBase, Message, RawMessageStreamEvent, Usage):
// - the key: `x-api-key` (or `Authorization: Bearer`, which the SDK on npm sends); none is 401
//   authentication_error "x-api-key header is required", a wrong one 401 "invalid x-api-key";
// - `anthropic-version` is required (400 "anthropic-version: header is required"), a dated value;
// - errors are {type: "error", error: {type, message}} with a `request-id` header;
// - `anthropic-beta` must be a list of beta names. Claude Code 2.1.165 was seen sending POST
//   /v1/messages?beta=true with x-api-key, anthropic-version 2023-06-01, anthropic-beta
//   "claude-code-20250219, interleaved-thinking-2025-05-14, context-management-2025-06-27,
//   prompt-caching-scope-2026-01-05, mid-conversation-system-2026-04-07, effort-2025-11-24" and body
//   keys context_management, max_tokens, messages (roles user and system), metadata, model,
//   output_config (effort), stream, system (blocks), thinking (adaptive), tools (25);
// - the body is checked in messages-check.ts: required fields, closed field lists on the body and
//   every block, tools (custom and dated server tools), tool_choice, thinking (enabled / adaptive /
//   disabled), output_config, context_management, at most 4 cache_control breakpoints, each tool_use
//   answered by a tool_result in the next message; roles user|assistant|system (the SDK's
//   SystemMessageParam, text blocks only);
// - a stream is message_start, per block content_block_start, deltas (text_delta, thinking_delta then
//   signature_delta, input_json_delta for tool_use), content_block_stop, then message_delta
//   (stop_reason, the final counts: output_tokens and again the input classes), message_stop, each as `event:` + `data:`.
// `script` decides the answer's blocks (tool_use answers stop with stop_reason tool_use).
// Usage is the fake's own count (`usage`, with the prompt-cache classes the vendor reports beside
// input_tokens). `cut: 'after-start'` breaks a stream's connection right after message_start;
// `delayMs` answers that much later; `stopped` counts calls whose caller hung up before the answer
// was whole (the gateway stopping the upstream call).

const VERSION = /^\d{4}-\d{2}-\d{2}$/;

export interface FakeMessagesText {
  url: string;
  key: string;
  models: string[];
  /** Each request as received: `raw` is its body's text as it came. */
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any; raw: string }[];
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
  mode: 'ok' | 'down';
  cut?: 'after-start';
  delayMs: number;
  /** Calls whose whole request arrived (counted before `delayMs`). */
  received: number;
  stopped: number;
  /** Decides the answer's blocks from the parsed body (text / tool_use / thinking); undefined echoes. */
  script?: Script;
  close(): Promise<void>;
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
          const raw = Buffer.concat(chunks).toString('utf8');
          try {
            body = JSON.parse(raw);
          } catch {
            throw invalid('There was an error parsing the body of your request');
          }
          fake.requests.push({ path: req.url ?? '', headers: req.headers, body, raw });
          const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
          const given = req.headers['x-api-key'] ?? bearer;
          if (!given) throw new Refusal(401, 'authentication_error', 'x-api-key header is required');
          if (given !== fake.key) throw new Refusal(401, 'authentication_error', 'invalid x-api-key');
          const version = req.headers['anthropic-version'];
          if (version === undefined) throw invalid('anthropic-version: header is required');
          if (!VERSION.test(String(version))) throw invalid(`anthropic-version: invalid version ${version}`);
          const beta = req.headers['anthropic-beta'];
          if (beta !== undefined && !String(beta).split(',').every((name) => /^[a-z0-9-]+$/.test(name.trim()))) throw invalid(`Unexpected value(s) \`${beta}\` for the \`anthropic-beta\` header.`);
          // The SDK's beta client (what Claude Code uses) adds ?beta=true.
          if (req.method !== 'POST' || !/^\/v1\/messages(\?beta=true)?$/.test(req.url ?? '')) throw new Refusal(404, 'not_found_error', 'Not Found');
          if (fake.mode === 'down') throw new Refusal(529, 'overloaded_error', 'Overloaded');
          const echo = `echo: ${checkMessages(body, fake.models)}`;
          const id = `msg_fake${served}`;
          const blocks = answerBlocks(fake.script?.(body) ?? [{ type: 'text', text: echo }], served);
          const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
          if (!body.stream) {
            return send(200, { id, type: 'message', role: 'assistant', model: body.model, content: blocks, stop_reason: stop, stop_sequence: null, usage: usageOf(fake) });
          }
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': requestId });
          const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
          event('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usageOf(fake), output_tokens: 1 } } });
          // Once message_start is on the wire: the connection breaks.
          if (fake.cut === 'after-start') return void res.write('', () => res.socket?.destroy());
          blocks.forEach((block, index) => {
            const delta = (d: unknown) => event('content_block_delta', { type: 'content_block_delta', index, delta: d });
            if (block.type === 'text') {
              event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
              if (index === 0) event('ping', { type: 'ping' });
              for (const word of pieces(block.text)) delta({ type: 'text_delta', text: word });
            } else if (block.type === 'thinking') {
              event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
              for (const word of pieces(block.thinking)) delta({ type: 'thinking_delta', thinking: word });
              delta({ type: 'signature_delta', signature: block.signature });
            } else {
              event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
              // The first delta is empty, as the vendor's are.
              for (const part of ['', ...halves(JSON.stringify(block.input))]) delta({ type: 'input_json_delta', partial_json: part });
            }
            event('content_block_stop', { type: 'content_block_stop', index });
          });
          // The final counts, cumulative: the vendor repeats the input classes beside output_tokens.
          const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens } = usageOf(fake);
          event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens } });
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

type Block = { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The answer's content blocks in the vendor's shape (ids toolu_..., a signature on every thinking block). */
function answerBlocks(parts: ScriptedPart[], served: number): Block[] {
  return parts.map((part, k) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'thinking') return { type: 'thinking', thinking: part.thinking, signature: part.signature ?? Buffer.from(`fake-signature-${served}-${k}`).toString('base64') };
    return { type: 'tool_use', id: part.id ?? `toolu_fake${served}_${k}`, name: part.name, input: part.input };
  });
}
