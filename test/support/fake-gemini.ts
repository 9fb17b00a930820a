import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

// A local stand-in for the Gemini API (generativelanguage.googleapis.com), image output only, strict
// where the real service is. What it holds to, from the API reference and @google/genai 2.32's
// request/response types (dist/genai.d.ts: GenerateContentParameters, GenerationConfig, ImageConfig,
// GenerateContentResponse, FinishReason, BlockedReason; dist/node/index.mjs: generateContentParametersToMldev):
// - POST /v1beta/models/{model}:generateContent and GET /v1beta/models/{model}; key in `x-goog-api-key`.
//   No key: 403 PERMISSION_DENIED; a wrong key: 400 INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID.
// - Errors are {error: {code, message, status, details?}}. The body is proto JSON: an unknown field
//   anywhere is 400 `Invalid JSON payload received. Unknown name "x"`.
// - contents[].parts[] hold exactly one of text / inlineData {mimeType, data (base64)}.
// - generationConfig.responseModalities must include IMAGE for an image; imageConfig.aspectRatio is one
//   of the model's ratios and imageSize one of "512" (3.1 Flash only), "1K", "2K", "4K" (upper-case K).
// - Image models make one candidate: candidateCount above 1 is refused.
// - The answer: candidates[0].content.parts with the image as inlineData (Gemini 3 Pro Image adds a
//   `thought: true` draft image first), finishReason, usageMetadata {promptTokenCount,
//   candidatesTokenCount, thoughtsTokenCount, totalTokenCount}. A blocked prompt has no candidates
//   and promptFeedback.blockReason.
// Prompt markers steer refusals: [blocked-prompt], [image-safety], [prohibited], [no-image].

export const FAKE_GEMINI_RATIOS: Record<string, string[]> = {
  'gemini-3.1-flash-image-preview': ['1:1', '1:4', '1:8', '2:3', '3:2', '3:4', '4:1', '4:3', '4:5', '5:4', '8:1', '9:16', '16:9', '21:9'],
  'gemini-3-pro-image-preview': ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'],
  'gemini-3.1-flash-lite-image': ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'],
};
const SIZES: Record<string, number> = { '512': 512, '1K': 1024, '2K': 2048, '4K': 4096 };
/** Output tokens per image by size (the fake's own figures; what matters is that they are reported). */
export const FAKE_GEMINI_IMAGE_TOKENS: Record<string, number> = { '512': 747, '1K': 1120, '2K': 1120, '4K': 2000 };
export const FAKE_GEMINI_TOKENS_PER_INPUT_IMAGE = 258;

const TOP = ['contents', 'generationConfig', 'safetySettings', 'systemInstruction', 'tools', 'toolConfig', 'cachedContent'];
const CONFIG = ['responseModalities', 'imageConfig', 'candidateCount', 'seed', 'temperature', 'topP', 'topK', 'maxOutputTokens', 'stopSequences', 'thinkingConfig'];
const IMAGE_CONFIG = ['aspectRatio', 'imageSize'];
const INPUT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'];

export interface FakeGeminiImage {
  bytes: Buffer;
  width: number;
  height: number;
}

export interface FakeGemini {
  url: string;
  key: string;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  /** The final images sent, in order. */
  images: FakeGeminiImage[];
  /** 'down': 503 UNAVAILABLE; 'busy': 429 RESOURCE_EXHAUSTED. */
  mode: 'ok' | 'down' | 'busy';
  /** Reports this many output tokens per image instead of the table's. */
  outputTokens?: number;
  /** The format it answers images in (Gemini chooses its own; PNG unless set). */
  format?: 'png' | 'jpeg';
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
    readonly details?: unknown[],
  ) {
    super(message);
  }
}

const bad = (message: string) => new Refusal(400, 'INVALID_ARGUMENT', message);

function closed(object: unknown, allowed: string[], path: string) {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw bad(`Invalid value at '${path}': expected an object`);
  const unknown = Object.keys(object).find((k) => !allowed.includes(k));
  if (unknown) throw bad(`Invalid JSON payload received. Unknown name "${unknown}" at '${path}': Cannot find field.`);
}

function checkRequest(model: string, body: any): { ratio: string; size: string; text: string; inputImages: number } {
  closed(body, TOP, 'request');
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw bad('* GenerateContentRequest.contents: contents is not specified');
  let text = '';
  let inputImages = 0;
  body.contents.forEach((content: any, i: number) => {
    closed(content, ['role', 'parts'], `contents[${i}]`);
    if (content.role !== undefined && !['user', 'model'].includes(content.role)) throw bad(`Please use a valid role: user, model.`);
    if (!Array.isArray(content.parts) || content.parts.length === 0) throw bad(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    content.parts.forEach((part: any, j: number) => {
      const at = `contents[${i}].parts[${j}]`;
      closed(part, ['text', 'inlineData', 'fileData', 'thought', 'thoughtSignature'], at);
      const kinds = ['text', 'inlineData', 'fileData'].filter((k) => part[k] !== undefined);
      if (kinds.length !== 1) throw bad(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field`);
      if (part.text !== undefined) {
        if (typeof part.text !== 'string') throw bad(`Invalid value at '${at}.text' (TYPE_STRING)`);
        text += part.text;
      }
      if (part.inlineData !== undefined) {
        closed(part.inlineData, ['mimeType', 'data', 'displayName'], `${at}.inline_data`);
        const { mimeType, data } = part.inlineData;
        if (typeof data !== 'string' || !/^[A-Za-z0-9+/=_-]*$/.test(data)) throw bad(`Invalid value at '${at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`);
        if (!INPUT_TYPES.includes(mimeType)) throw bad(`Unsupported MIME type: ${mimeType}`);
        inputImages++;
      }
    });
  });
  const config = body.generationConfig ?? {};
  closed(config, CONFIG, 'generation_config');
  if (config.candidateCount !== undefined && config.candidateCount !== 1) throw bad('Multiple candidates is not enabled for this model');
  const modalities = config.responseModalities ?? ['TEXT'];
  if (!Array.isArray(modalities) || modalities.some((m: unknown) => !['TEXT', 'IMAGE', 'AUDIO'].includes(m as string))) {
    throw bad(`Invalid value at 'generation_config.response_modalities'`);
  }
  if (!modalities.includes('IMAGE')) throw bad('This model only supports image output: responseModalities must include IMAGE');
  const imageConfig = config.imageConfig ?? {};
  closed(imageConfig, IMAGE_CONFIG, 'generation_config.image_config');
  const ratio = imageConfig.aspectRatio ?? '1:1';
  if (!FAKE_GEMINI_RATIOS[model]!.includes(ratio)) throw bad(`Unsupported aspect ratio: ${ratio}`);
  const size = imageConfig.imageSize ?? '1K';
  if (!(size in SIZES) || (size === '512' && model !== 'gemini-3.1-flash-image-preview')) throw bad(`Unsupported image size: ${size}`);
  return { ratio, size, text, inputImages };
}

async function draw(ratio: string, size: string, seed: string, format: 'png' | 'jpeg' = 'png'): Promise<FakeGeminiImage> {
  const [rw, rh] = ratio.split(':').map(Number) as [number, number];
  const side = SIZES[size]!;
  // The real service's sizes keep about side^2 pixels at the ratio; kept small here (a tenth) so tests stay quick.
  const area = (side / 10) ** 2;
  const width = Math.max(16, Math.round(Math.sqrt((area * rw) / rh)));
  const height = Math.max(16, Math.round(area / width));
  const shade = createHash('sha256').update(seed).digest();
  const image = sharp({ create: { width, height, channels: 3, background: { r: shade[0]!, g: shade[1]!, b: shade[2]! } } });
  const bytes = await (format === 'jpeg' ? image.jpeg() : image.png()).toBuffer();
  return { bytes, width, height };
}

export async function startFakeGemini(key = 'fake-gemini-key'): Promise<FakeGemini> {
  const fake = { key, requests: [], images: [], mode: 'ok' } as unknown as FakeGemini;
  let served = 0;

  async function answer(req: http.IncomingMessage, raw: string): Promise<[number, unknown]> {
    const path = req.url ?? '';
    const body = raw ? JSON.parse(raw) : undefined;
    fake.requests.push({ path, headers: req.headers, body });
    const given = req.headers['x-goog-api-key'];
    if (!given) throw new Refusal(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    if (given !== fake.key) {
      throw new Refusal(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
      ]);
    }
    if (fake.mode === 'down') throw new Refusal(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
    if (fake.mode === 'busy') throw new Refusal(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).');
    const match = /^\/v1beta\/models\/([^/:?]+)(:generateContent)?(\?.*)?$/.exec(path);
    const model = match?.[1] ? decodeURIComponent(match[1]) : '';
    if (!match || !(model in FAKE_GEMINI_RATIOS)) throw new Refusal(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent.`);
    if (req.method === 'GET' && !match[2]) {
      return [200, { name: `models/${model}`, version: '3.1', displayName: model, inputTokenLimit: 65536, outputTokenLimit: 32768, supportedGenerationMethods: ['generateContent', 'countTokens'] }];
    }
    if (req.method !== 'POST' || !match[2]) throw new Refusal(404, 'NOT_FOUND', 'Not found');
    if (!String(req.headers['content-type']).startsWith('application/json')) throw bad('Invalid JSON payload received.');
    const { ratio, size, text, inputImages } = checkRequest(model, body);
    const usage = (output: number, thoughts = 0) => {
      const prompt = Math.ceil(text.length / 4) + inputImages * FAKE_GEMINI_TOKENS_PER_INPUT_IMAGE;
      return {
        promptTokenCount: prompt,
        candidatesTokenCount: output,
        ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
        totalTokenCount: prompt + output + thoughts,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: Math.ceil(text.length / 4) }],
        candidatesTokensDetails: output ? [{ modality: 'IMAGE', tokenCount: output }] : [],
      };
    };
    const base = { modelVersion: model, responseId: `resp-${++served}` };
    if (text.includes('[blocked-prompt]')) return [200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: usage(0), ...base }];
    for (const [marker, reason] of [['[image-safety]', 'IMAGE_SAFETY'], ['[prohibited]', 'PROHIBITED_CONTENT']] as const) {
      if (text.includes(marker)) return [200, { candidates: [{ content: { role: 'model' }, finishReason: reason, index: 0 }], usageMetadata: usage(0), ...base }];
    }
    if (text.includes('[no-image]')) {
      return [200, { candidates: [{ content: { role: 'model', parts: [{ text: 'I can only describe it.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage(9), ...base }];
    }
    const image = await draw(ratio, size, `${text}:${served}`, fake.format);
    fake.images.push(image);
    const parts: unknown[] = [{ text: 'Here is your image.' }];
    // Gemini 3 Pro Image thinks in draft images first; they are marked and are not the answer.
    if (model === 'gemini-3-pro-image-preview') parts.unshift({ inlineData: { mimeType: 'image/png', data: (await draw('1:1', '512', 'draft')).bytes.toString('base64') }, thought: true });
    parts.push({ inlineData: { mimeType: `image/${fake.format ?? 'png'}`, data: image.bytes.toString('base64') } });
    return [200, { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage(fake.outputTokens ?? FAKE_GEMINI_IMAGE_TOKENS[size]!, 40), ...base }];
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
      answer(req, Buffer.concat(chunks).toString('utf8')).then(
        ([status, body]) => send(status, body),
        (err) => {
          if (err instanceof Refusal) return send(err.code, { error: { code: err.code, message: err.message, status: err.status, ...(err.details ? { details: err.details } : {}) } });
          if (err instanceof SyntaxError) return send(400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
          send(500, { error: { code: 500, message: String(err), status: 'INTERNAL' } });
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
