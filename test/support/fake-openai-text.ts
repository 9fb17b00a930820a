import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveResponses, type ResponsesState } from './fake-openai-responses.ts';
import { checkChat } from './openai-chat-check.ts';
import { OpenAIRefusal as Refusal } from './openai-responses-check.ts';
import { pieces, type Script } from './fake-script.ts';

// The OpenAI chat-completions API (POST /v1/chat/completions) and Responses API (POST /v1/responses,
// GET /v1/responses/{id}: fake-openai-responses.ts), strict where the real ones are. Shapes from the
// official SDK (openai@6.49: ChatCompletion, ChatCompletionChunk, CompletionUsage) and the API
// reference's error bodies {error: {message, type, param, code}}:
// - no Authorization: 401 "You didn't provide an API key..."; a wrong key: 401 code invalid_api_key;
// - chat bodies are checked in openai-chat-check.ts, Responses bodies in openai-responses-check.ts.
// Answers `echo: <last user text>`; usage is the fake's own count (`usage`), not the gateway's, so a
// test can tell which was billed. Chat with `tools` and no script calls the first tool (finish_reason
// tool_calls, id call_fake1). `script` decides either API's answer (text, tool calls, reasoning);
// chat has no reasoning output, so it drops thinking parts.

export interface FakeOpenAIText {
  url: string;
  key: string;
  models: string[];
  /** Each request as received: `raw` is its body's text as it came. */
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any; raw: string }[];
  /** The counts every answer reports (cached_tokens is a part of prompt_tokens, reasoning_tokens of completion_tokens). */
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number }; completion_tokens_details?: { reasoning_tokens: number } };
  /** A stream without its usage chunk even when include_usage asked for it (some compatible servers). */
  omitUsage?: boolean;
  /** The arguments of the tool call it answers with (when the request has tools). */
  toolArguments?: string;
  mode: 'ok' | 'down';
  /** Decides the answer (text / tool_use / thinking parts) from the parsed body; undefined is the default. */
  script?: Script;
  /** Responses kept by POST /v1/responses (unless store: false), by id. */
  responses: ResponsesState['stored'];
  close(): Promise<void>;
}

function lastUserText(body: any): string {
  const last = [...body.messages].reverse().find((m: any) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : (last?.content?.find((p: any) => p.type === 'text')?.text ?? '');
}

export async function startFakeOpenAIText(key = 'sk-fake-openai-text-key', models = ['gpt-fake-mini']): Promise<FakeOpenAIText> {
  const fake = { key, models, requests: [], usage: { prompt_tokens: 17, completion_tokens: 5 }, mode: 'ok', responses: new Map() } as unknown as FakeOpenAIText;
  let served = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${served}` }).end(JSON.stringify(body));
      try {
        let body: any;
        const raw = Buffer.concat(chunks).toString('utf8');
        try {
          body = req.method === 'GET' && raw === '' ? undefined : JSON.parse(raw);
        } catch {
          throw new Refusal(400, 'We could not parse the JSON body of your request.');
        }
        fake.requests.push({ path: req.url ?? '', headers: req.headers, body, raw });
        const auth = req.headers.authorization;
        if (!auth) throw new Refusal(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
        if (auth !== `Bearer ${fake.key}`) throw new Refusal(401, `Incorrect API key provided: ${auth.slice(7, 10)}***. You can find your API key at https://platform.openai.com/account/api-keys.`, null, 'invalid_api_key');
        const responses = /^\/v1\/responses(\/|$|\?)/.test(req.url ?? '');
        if (!responses && (req.method !== 'POST' || req.url !== '/v1/chat/completions')) throw new Refusal(404, `Invalid URL (${req.method} ${req.url})`);
        if (req.method === 'POST' && !String(req.headers['content-type']).startsWith('application/json')) throw new Refusal(400, 'Unsupported content type');
        if (fake.mode === 'down') throw new Refusal(503, 'The server is overloaded or not ready yet.', null, null, 'server_error');
        if (responses) return serveResponses({ stored: fake.responses }, fake, req, body, ++served, res);
        checkChat(body, fake.models);
        answer(fake, body, ++served, res);
      } catch (err) {
        if (!(err instanceof Refusal)) return send(500, { error: { message: String(err), type: 'server_error', param: null, code: null } });
        send(err.status, { error: { message: err.message, type: err.type, param: err.param, code: err.code } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}

function answer(fake: FakeOpenAIText, body: any, n: number, res: http.ServerResponse): void {
  const id = `chatcmpl-fake${n}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { ...fake.usage, total_tokens: fake.usage.prompt_tokens + fake.usage.completion_tokens };
  const scripted = fake.script?.(body);
  const tool = body.tools?.[0]?.function?.name as string | undefined;
  let text: string | null = body.response_format?.type === 'json_object' ? JSON.stringify({ echo: lastUserText(body) }) : `echo: ${lastUserText(body)}`;
  let calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  if (scripted) {
    const texts = scripted.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    text = texts.length ? texts.join('') : null;
    calls = scripted.flatMap((p, k) => (p.type === 'tool_use' ? [{ id: p.id ?? `call_fake${n}_${k}`, type: 'function' as const, function: { name: p.name, arguments: JSON.stringify(p.input) } }] : []));
  } else if (tool) {
    text = null;
    calls = [{ id: 'call_fake1', type: 'function', function: { name: tool, arguments: fake.toolArguments ?? '{"city":"Paris"}' } }];
  }
  const finish = calls.length ? 'tool_calls' : 'stop';
  if (!body.stream) {
    const message = { role: 'assistant', content: text, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) };
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage, service_tier: 'default', system_fingerprint: 'fp_fake' }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  const withUsage = body.stream_options?.include_usage === true && !fake.omitUsage;
  const chunk = (delta: unknown, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, system_fingerprint: 'fp_fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`);
  chunk({ role: 'assistant', content: '', refusal: null });
  if (text !== null) for (const word of pieces(text)) chunk({ content: word });
  // Each call opens with its id and name, then its arguments follow by index.
  calls.forEach((call, index) => {
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  });
  chunk({}, finish);
  if (withUsage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, system_fingerprint: 'fp_fake', choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}
