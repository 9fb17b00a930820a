import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bad, checkContents, checkGenerate, closed, Refusal, TOP } from './gemini-check.ts';
import { pieces, type Script, type ScriptedPart } from './fake-script.ts';

// The Gemini API for text (generativelanguage.googleapis.com), strict where the real service is.
// From the API reference and @google/genai 2.32 (dist/genai.d.ts: GenerateContentParameters,
// GenerationConfig, GenerateContentResponse, CountTokensResponse; dist/node/index.mjs:
// generateContentParametersToMldev, countTokensParametersToMldev):
// - POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse | :countTokens;
//   the key in `x-goog-api-key` (or ?key=). No key: 403 PERMISSION_DENIED; a wrong key: 400
//   INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID. Errors are {error: {code, message, status}}.
// - the body is checked in gemini-check.ts (closed field lists, parts, function call/response turns,
//   tools, toolConfig, thinkingConfig).
// - countTokens takes `contents` or `generateContentRequest` (needed for a systemInstruction), not both.
// - Answers are bare (never wrapped); a stream is `data: <GenerateContentResponse>` events, the last
//   with finishReason and usageMetadata. Usage is the fake's own count (`usage`).
// - `script` decides the answer's parts: tool_use is a functionCall part, thinking a thought part
//   (its text only when thinkingConfig.includeThoughts) whose thoughtSignature rides on the next part,
//   as the vendor signs the part that follows its thinking.

export interface FakeGeminiText {
  url: string;
  key: string;
  models: string[];
  /** Each request as received: `raw` is its body's text as it came. */
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any; raw: string }[];
  /** cachedContentTokenCount is a part of promptTokenCount; toolUsePromptTokenCount is beside it. */
  usage: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount: number; cachedContentTokenCount?: number; toolUsePromptTokenCount?: number };
  /** Also takes `Authorization: Bearer <key>`, as a native upstream (another gateway speaking this format) does. */
  bearer?: boolean;
  /** What countTokens answers. */
  countAnswer: number;
  mode: 'ok' | 'down';
  /** Decides the answer's parts from the parsed body (text / tool_use / thinking); undefined echoes. */
  script?: Script;
  close(): Promise<void>;
}

export async function startFakeGeminiText(key = 'fake-gemini-text-key', models = ['gemini-fake-flash']): Promise<FakeGeminiText> {
  const fake = { key, models, requests: [], usage: { promptTokenCount: 13, candidatesTokenCount: 4, thoughtsTokenCount: 2 }, countAnswer: 77, mode: 'ok' } as unknown as FakeGeminiText;

  function route(req: http.IncomingMessage, raw: string): { stream: boolean; json?: unknown; parts?: any[] } {
    const url = new URL(req.url ?? '/', 'http://fake');
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      throw bad('Invalid JSON payload received.');
    }
    fake.requests.push({ path: `${url.pathname}${url.search}`, headers: req.headers, body, raw });
    const bearer = fake.bearer ? /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] : undefined;
    const given = req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? bearer;
    if (!given) throw new Refusal(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    if (given !== fake.key) throw new Refusal(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]);
    if (fake.mode === 'down') throw new Refusal(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(url.pathname);
    const model = match ? decodeURIComponent(match[1]!) : '';
    if (!match || req.method !== 'POST') throw new Refusal(404, 'NOT_FOUND', `Not found: ${req.method} ${url.pathname}`);
    if (!fake.models.includes(model)) throw new Refusal(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for ${match[2]}.`);
    if (!String(req.headers['content-type']).startsWith('application/json')) throw bad('Invalid JSON payload received.');
    if (match[2] === 'countTokens') {
      closed(body, ['contents', 'generateContentRequest'], 'request');
      if (body.contents && body.generateContentRequest) throw bad('contents and generateContentRequest cannot both be set');
      if (body.generateContentRequest) {
        closed(body.generateContentRequest, ['model', ...TOP], 'generate_content_request');
        if (body.generateContentRequest.model !== `models/${model}`) throw bad('generate_content_request.model must name the model of the call');
        const { model: _m, ...rest } = body.generateContentRequest;
        checkGenerate(rest);
      } else checkContents(body.contents, 'CountTokensRequest');
      return { stream: false, json: { totalTokens: fake.countAnswer, promptTokensDetails: [{ modality: 'TEXT', tokenCount: fake.countAnswer }] } };
    }
    const text = `echo: ${checkGenerate(body)}`;
    // The Pro models always think: a zero budget is refused (Flash and Flash-Lite take it).
    if (/-pro\b/.test(model) && body.generationConfig?.thinkingConfig?.thinkingBudget === 0) throw bad('Budget 0 is invalid. This model only works in thinking mode.');
    const parts = answerParts(fake.script?.(body) ?? [{ type: 'text', text }], body.generationConfig?.thinkingConfig?.includeThoughts === true);
    if (match[2] === 'streamGenerateContent' && url.searchParams.get('alt') !== 'sse') return { stream: false, json: [answer(parts, fake)] };
    return match[2] === 'streamGenerateContent' ? { stream: true, parts } : { stream: false, json: answer(parts, fake) };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
      try {
        const routed = route(req, Buffer.concat(chunks).toString('utf8'));
        if (!routed.stream) return send(200, routed.json);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // Text goes out a word per event, other parts whole; the last event carries the finish and usage.
        const events = routed.parts!.flatMap((part) => (typeof part.text === 'string' && !part.thought ? pieces(part.text).map((word, i) => ({ ...part, text: word, ...(i > 0 ? { thoughtSignature: undefined } : {}) })) : [part]));
        events.forEach((part, i) => {
          const last = i === events.length - 1;
          const event = { candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], ...(last ? { usageMetadata: usageOf(fake) } : { usageMetadata: { promptTokenCount: fake.usage.promptTokenCount, totalTokenCount: fake.usage.promptTokenCount } }), modelVersion: 'fake', responseId: 'resp-fake' };
          res.write(`data: ${JSON.stringify(event)}\r\n\r\n`);
        });
        res.end();
      } catch (err) {
        if (!(err instanceof Refusal)) return send(500, { error: { code: 500, message: String(err), status: 'INTERNAL' } });
        send(err.code, { error: { code: err.code, message: err.message, status: err.status, ...(err.details ? { details: err.details } : {}) } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}

const usageOf = (fake: FakeGeminiText) => ({
  ...fake.usage,
  totalTokenCount: fake.usage.promptTokenCount + (fake.usage.toolUsePromptTokenCount ?? 0) + fake.usage.candidatesTokenCount + fake.usage.thoughtsTokenCount,
});

function answer(parts: any[], fake: FakeGeminiText) {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usageOf(fake), modelVersion: 'fake', responseId: 'resp-fake' };
}

/** The answer's parts; a thinking part's signature goes on the part after it. */
function answerParts(scripted: ScriptedPart[], includeThoughts: boolean): any[] {
  const parts: any[] = [];
  let signature: string | undefined;
  scripted.forEach((part, k) => {
    if (part.type === 'thinking') {
      signature = part.signature ?? Buffer.from(`fake-thought-${k}`).toString('base64');
      if (includeThoughts) parts.push({ text: part.thinking, thought: true });
      return;
    }
    const data = part.type === 'text' ? { text: part.text } : { functionCall: { ...(part.id ? { id: part.id } : {}), name: part.name, args: part.input } };
    parts.push({ ...data, ...(signature ? { thoughtSignature: signature } : {}) });
    signature = undefined;
  });
  return parts;
}
