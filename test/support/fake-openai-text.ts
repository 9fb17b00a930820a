import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The OpenAI chat-completions API (POST /v1/chat/completions), strict where the real one is. Shapes
// from the official SDK (node_modules/openai/resources/chat/completions/completions.d.ts, openai@6.49:
// ChatCompletionCreateParamsBase, ChatCompletion, ChatCompletionChunk, CompletionUsage) and the API
// reference's error bodies {error: {message, type, param, code}}:
// - no Authorization: 401 "You didn't provide an API key..."; a wrong key: 401 code invalid_api_key;
// - an unknown body field: 400 "Unrecognized request argument supplied: <name>";
// - `model` and `messages` required (400 missing_required_parameter); roles system, developer, user,
//   assistant, tool; content a string, null (assistant with tool_calls) or typed parts (text,
//   image_url); `stream_options` only with `stream: true`; temperature 0-2, top_p 0-1; n 1-128;
// - an unknown model: 404 model_not_found.
// Answers `echo: <last user text>`; usage is the fake's own count (`usage`), not the gateway's, so a
// test can tell which was billed. With `tools`, the first tool is called (finish_reason tool_calls).

const FIELDS = new Set(['messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options']);
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export interface FakeOpenAIText {
  url: string;
  key: string;
  models: string[];
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  /** The counts every answer reports (cached_tokens is a part of prompt_tokens, reasoning_tokens of completion_tokens). */
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number }; completion_tokens_details?: { reasoning_tokens: number } };
  /** A stream without its usage chunk even when include_usage asked for it (some compatible servers). */
  omitUsage?: boolean;
  /** The arguments of the tool call it answers with (when the request has tools). */
  toolArguments?: string;
  mode: 'ok' | 'down';
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(readonly status: number, message: string, readonly param: string | null = null, readonly code: string | null = null, readonly type = 'invalid_request_error') {
    super(message);
  }
}

function check(fake: FakeOpenAIText, body: any): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, 'We could not parse the JSON body of your request.');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown) throw new Refusal(400, `Unrecognized request argument supplied: ${unknown}`);
  for (const field of ['model', 'messages']) if (body[field] === undefined) throw new Refusal(400, `Missing required parameter: '${field}'.`, field, 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new Refusal(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages', 'empty_array');
  body.messages.forEach((m: any, i: number) => {
    if (!ROLES.has(m?.role)) throw new Refusal(400, `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`, `messages[${i}].role`, 'invalid_value');
    const content = m.content;
    const ok = typeof content === 'string' || (content === null && m.role === 'assistant') || (content === undefined && m.tool_calls) || (Array.isArray(content) && content.every((p: any) => (p?.type === 'text' && typeof p.text === 'string') || (p?.type === 'image_url' && typeof p.image_url?.url === 'string')));
    if (!ok) throw new Refusal(400, `Invalid value for 'messages[${i}].content'.`, `messages[${i}].content`, 'invalid_type');
  });
  if (body.stream_options !== undefined && body.stream !== true) throw new Refusal(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value');
  for (const [field, max] of [['temperature', 2], ['top_p', 1]] as const) {
    if (body[field] !== undefined && !(typeof body[field] === 'number' && body[field] >= 0 && body[field] <= max)) throw new Refusal(400, `Invalid '${field}': decimal between 0 and ${max} expected.`, field, 'decimal_out_of_range');
  }
  for (const field of ['max_tokens', 'max_completion_tokens']) if (body[field] !== undefined && !Number.isInteger(body[field])) throw new Refusal(400, `Invalid type for '${field}': expected an integer.`, field, 'invalid_type');
  if (!fake.models.includes(body.model)) throw new Refusal(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, null, 'model_not_found');
}

function lastUserText(body: any): string {
  const last = [...body.messages].reverse().find((m: any) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : (last?.content?.find((p: any) => p.type === 'text')?.text ?? '');
}

export async function startFakeOpenAIText(key = 'sk-fake-openai-text-key', models = ['gpt-fake-mini']): Promise<FakeOpenAIText> {
  const fake = { key, models, requests: [], usage: { prompt_tokens: 17, completion_tokens: 5 }, mode: 'ok' } as unknown as FakeOpenAIText;
  let served = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${served}` }).end(JSON.stringify(body));
      try {
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          throw new Refusal(400, 'We could not parse the JSON body of your request.');
        }
        fake.requests.push({ path: req.url ?? '', headers: req.headers, body });
        const auth = req.headers.authorization;
        if (!auth) throw new Refusal(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
        if (auth !== `Bearer ${fake.key}`) throw new Refusal(401, `Incorrect API key provided: ${auth.slice(7, 10)}***. You can find your API key at https://platform.openai.com/account/api-keys.`, null, 'invalid_api_key');
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') throw new Refusal(404, `Invalid URL (${req.method} ${req.url})`);
        if (!String(req.headers['content-type']).startsWith('application/json')) throw new Refusal(400, 'Unsupported content type');
        if (fake.mode === 'down') throw new Refusal(503, 'The server is overloaded or not ready yet.', null, null, 'server_error');
        check(fake, body);
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
  const tool = body.tools?.[0]?.function?.name as string | undefined;
  const text = body.response_format?.type === 'json_object' ? JSON.stringify({ echo: lastUserText(body) }) : `echo: ${lastUserText(body)}`;
  const usage = { ...fake.usage, total_tokens: fake.usage.prompt_tokens + fake.usage.completion_tokens };
  const call = { id: 'call_fake1', type: 'function', function: { name: tool, arguments: fake.toolArguments ?? '{"city":"Paris"}' } };
  if (!body.stream) {
    const message = tool ? { role: 'assistant', content: null, refusal: null, tool_calls: [call] } : { role: 'assistant', content: text, refusal: null };
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, logprobs: null, finish_reason: tool ? 'tool_calls' : 'stop' }], usage, service_tier: 'default', system_fingerprint: 'fp_fake' }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  const withUsage = body.stream_options?.include_usage === true && !fake.omitUsage;
  const chunk = (delta: unknown, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, system_fingerprint: 'fp_fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`);
  chunk({ role: 'assistant', content: '', refusal: null });
  if (tool) {
    chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: tool, arguments: '' } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] });
  } else {
    for (const word of text.split(/(?<= )/)) chunk({ content: word });
  }
  chunk({}, tool ? 'tool_calls' : 'stop');
  if (withUsage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, system_fingerprint: 'fp_fake', choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}
