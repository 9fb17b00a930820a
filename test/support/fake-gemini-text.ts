import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The Gemini API for text (generativelanguage.googleapis.com), strict where the real service is.
// From the API reference and @google/genai 2.32 (dist/genai.d.ts: GenerateContentParameters,
// GenerationConfig, GenerateContentResponse, CountTokensResponse; dist/node/index.mjs:
// generateContentParametersToMldev, countTokensParametersToMldev):
// - POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse | :countTokens;
//   the key in `x-goog-api-key` (or ?key=). No key: 403 PERMISSION_DENIED; a wrong key: 400
//   INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID. Errors are {error: {code, message, status}}.
// - Proto JSON: an unknown field anywhere is 400 `Invalid JSON payload received. Unknown name "x"`.
// - contents[] with role user|model and non-empty parts, each exactly one of text / inlineData.
// - countTokens takes `contents` or `generateContentRequest` (needed for a systemInstruction), not both.
// - Answers are bare (never wrapped); a stream is `data: <GenerateContentResponse>` events, the last
//   with finishReason and usageMetadata. Usage is the fake's own count (`usage`).

const TOP = ['contents', 'generationConfig', 'safetySettings', 'systemInstruction', 'tools', 'toolConfig', 'cachedContent'];
const CONFIG = ['stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'mediaResolution'];

export interface FakeGeminiText {
  url: string;
  key: string;
  models: string[];
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  /** cachedContentTokenCount is a part of promptTokenCount; toolUsePromptTokenCount is beside it. */
  usage: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount: number; cachedContentTokenCount?: number; toolUsePromptTokenCount?: number };
  /** Also takes `Authorization: Bearer <key>`, as a native upstream (another gateway speaking this format) does. */
  bearer?: boolean;
  /** What countTokens answers. */
  countAnswer: number;
  mode: 'ok' | 'down';
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(readonly code: number, readonly status: string, message: string, readonly details?: unknown[]) {
    super(message);
  }
}
const bad = (message: string) => new Refusal(400, 'INVALID_ARGUMENT', message);

function closed(object: unknown, allowed: string[], path: string) {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw bad(`Invalid value at '${path}': expected an object`);
  const unknown = Object.keys(object).find((k) => !allowed.includes(k));
  if (unknown) throw bad(`Invalid JSON payload received. Unknown name "${unknown}" at '${path}': Cannot find field.`);
}

function checkContents(contents: any, where: string): string {
  if (!Array.isArray(contents) || contents.length === 0) throw bad(`* ${where}.contents: contents is not specified`);
  let text = '';
  contents.forEach((content: any, i: number) => {
    closed(content, ['role', 'parts'], `contents[${i}]`);
    if (content.role !== undefined && !['user', 'model'].includes(content.role)) throw bad('Please use a valid role: user, model.');
    if (!Array.isArray(content.parts) || content.parts.length === 0) throw bad(`* ${where}.contents[${i}].parts: contents.parts must not be empty.`);
    content.parts.forEach((part: any, j: number) => {
      closed(part, ['text', 'inlineData', 'fileData', 'thought', 'thoughtSignature'], `contents[${i}].parts[${j}]`);
      if (['text', 'inlineData', 'fileData'].filter((k) => part[k] !== undefined).length !== 1) throw bad(`* ${where}.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`);
      if (part.inlineData) closed(part.inlineData, ['mimeType', 'data', 'displayName'], `contents[${i}].parts[${j}].inline_data`);
      if (typeof part.text === 'string' && content.role !== 'model') text = part.text;
    });
  });
  return text;
}

function checkGenerate(body: any): string {
  closed(body, TOP, 'request');
  const text = checkContents(body.contents, 'GenerateContentRequest');
  if (body.systemInstruction !== undefined) closed(body.systemInstruction, ['role', 'parts'], 'system_instruction');
  if (body.generationConfig !== undefined) {
    closed(body.generationConfig, CONFIG, 'generation_config');
    const { temperature, topP, maxOutputTokens } = body.generationConfig;
    if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) throw bad('temperature must be in [0, 2]');
    if (topP !== undefined && !(topP >= 0 && topP <= 1)) throw bad('top_p must be in [0, 1]');
    if (maxOutputTokens !== undefined && !Number.isInteger(maxOutputTokens)) throw bad("Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32)");
  }
  return text;
}

export async function startFakeGeminiText(key = 'fake-gemini-text-key', models = ['gemini-fake-flash']): Promise<FakeGeminiText> {
  const fake = { key, models, requests: [], usage: { promptTokenCount: 13, candidatesTokenCount: 4, thoughtsTokenCount: 2 }, countAnswer: 77, mode: 'ok' } as unknown as FakeGeminiText;

  function route(req: http.IncomingMessage, raw: string): { stream: boolean; json?: unknown; text?: string } {
    const url = new URL(req.url ?? '/', 'http://fake');
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      throw bad('Invalid JSON payload received.');
    }
    fake.requests.push({ path: `${url.pathname}${url.search}`, headers: req.headers, body });
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
    if (match[2] === 'streamGenerateContent' && url.searchParams.get('alt') !== 'sse') return { stream: false, json: [answer(text, fake)] };
    return match[2] === 'streamGenerateContent' ? { stream: true, text } : { stream: false, json: answer(text, fake) };
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
        const words = routed.text!.split(/(?<= )/);
        words.forEach((word, i) => {
          const last = i === words.length - 1;
          const event = { candidates: [{ content: { role: 'model', parts: [{ text: word }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], ...(last ? { usageMetadata: usageOf(fake) } : { usageMetadata: { promptTokenCount: fake.usage.promptTokenCount, totalTokenCount: fake.usage.promptTokenCount } }), modelVersion: 'fake', responseId: 'resp-fake' };
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

function answer(text: string, fake: FakeGeminiText) {
  return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usageOf(fake), modelVersion: 'fake', responseId: 'resp-fake' };
}
