import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

// A local stand-in for ModelArk's image API (Seedream), strict where the real one is. ModelArk has no
// official SDK on npm; the shapes followed here are the vendor's own:
// - Request: POST /api/v3/images/generations, `Authorization: Bearer <API key>`, JSON with model,
//   prompt, image (a URL or data URL, or a list of them), size ("1K".."4K" or "<w>x<h>"), seed,
//   sequential_image_generation ("auto" | "disabled"), sequential_image_generation_options
//   {max_images}, response_format ("url" | "b64_json"), output_format, watermark, stream
//   (volcengine-python-sdk: volcenginesdkarkruntime/resources/images/images.py, which sends every
//   field it was not given as null; ModelArk "Image generation API", docs 1541523 / 1666945).
// - Answer: {model, created, data: [{url, size} | {b64_json, size} | {error: {code, message}}],
//   usage: {generated_images, output_tokens, total_tokens}} (types/images/images.py: ImagesResponse);
//   a grouped request answers one entry per image, a refused image as an entry with `error`.
// - Errors: {error: {code, message, param, type}} (BytePlus ModelArk "Error codes", docs 1299023):
//   401 AuthenticationError, 400 MissingParameter / InvalidParameter / InputTextSensitiveContentDetected
//   / InputImageSensitiveContentDetected / OutputImageSensitiveContentDetected, 404
//   InvalidEndpointOrModel.NotFound, 429 RateLimitExceeded.EndpointRPMExceeded, 500 InternalServiceError.
// - Size limits per model (Seedream 5.0 tutorial, docs 1824121): 5.0 lite takes 2K/3K presets or
//   2560x1440..4096x4096 pixels; 5.0 Pro 1K/2K presets or 921,600..4,194,304 pixels, one image per
//   call (sequential_image_generation refused); the ratio within 1:16..16:1; at most 14 (lite) or 10
//   (Pro) references; references plus max_images at most 15.
// Stricter than the real API in one place: a field the SDK does not know is refused, so that a
// misspelt field in our adapter cannot pass unnoticed.
// Prompt markers steer refusals: [sensitive] (input text), [output-sensitive] (the image, or the
// second image of a group), [fewer] (a group one image short); a reference URL with "sensitive" in it.

interface ModelRules {
  presets: Record<string, number>;
  minPixels: number;
  maxPixels: number;
  maxReferences: number;
  grouped: boolean;
}

export const FAKE_ARK_MODELS: Record<string, ModelRules> = {
  'seedream-5-0-260128': { presets: { '2K': 2048, '3K': 3072 }, minPixels: 2560 * 1440, maxPixels: 4096 * 4096, maxReferences: 14, grouped: true },
  'seedream-5-0-pro-260628': { presets: { '1K': 1024, '2K': 2048 }, minPixels: 921_600, maxPixels: 4_194_304, maxReferences: 10, grouped: false },
};

const FIELDS = ['model', 'prompt', 'image', 'response_format', 'size', 'seed', 'guidance_scale', 'watermark', 'optimize_prompt', 'optimize_prompt_options', 'sequential_image_generation', 'sequential_image_generation_options', 'tools', 'output_format', 'layer_decomposition', 'stream'];

export interface FakeArkImage {
  bytes: Buffer;
  /** The size asked for (the image itself is drawn at a tenth of it, to keep tests quick). */
  size: string;
}

export interface FakeArk {
  url: string;
  key: string;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  images: FakeArkImage[];
  downloads: number;
  /** 'down': 500 InternalServiceError; 'busy': 429. */
  mode: 'ok' | 'down' | 'busy';
  /** Set: its storage serves this (an HTML error page, say) under `image/png` for every file link. */
  servedInstead?: Buffer;
  close(): Promise<void>;
}

class ArkError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type = 'BadRequest',
    readonly param = '',
  ) {
    super(message);
  }
}

const requestId = () => `021${Date.now()}${Math.random().toString(16).slice(2, 10)}`;
const invalid = (param: string, why: string) => new ArkError(400, 'InvalidParameter', `The parameter \`${param}\` specified in the request is not valid: ${why}. Request id: ${requestId()}`, 'BadRequest', param);
const given = (v: unknown) => v !== undefined && v !== null;

function checkSize(size: unknown, rules: ModelRules): { width: number; height: number } {
  if (!given(size)) return { width: 2048, height: 2048 };
  if (typeof size !== 'string') throw invalid('size', 'must be a string');
  const side = rules.presets[size];
  if (side) return { width: side, height: side };
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) throw invalid('size', `unsupported size ${size}`);
  const [width, height] = [Number(m[1]), Number(m[2])];
  const pixels = width * height;
  if (pixels < rules.minPixels || pixels > rules.maxPixels) throw invalid('size', `total pixels must be within [${rules.minPixels}, ${rules.maxPixels}]`);
  if (width / height > 16 || height / width > 16) throw invalid('size', 'aspect ratio must be within [1/16, 16]');
  return { width, height };
}

export async function startFakeArk(key = 'fake-ark-key'): Promise<FakeArk> {
  const fake = { key, requests: [], images: [], downloads: 0, mode: 'ok' } as unknown as FakeArk;
  const files = new Map<string, Buffer>();
  let made = 0;

  async function draw(size: { width: number; height: number }, format: string, seed: string) {
    const shade = createHash('sha256').update(seed).digest();
    const image = sharp({ create: { width: Math.round(size.width / 10), height: Math.round(size.height / 10), channels: 3, background: { r: shade[0]!, g: shade[1]!, b: shade[2]! } } });
    const bytes = await (format === 'png' ? image.png() : image.jpeg()).toBuffer();
    fake.images.push({ bytes, size: `${size.width}x${size.height}` });
    return bytes;
  }

  async function generate(req: http.IncomingMessage, raw: string): Promise<unknown> {
    if (req.headers.authorization !== `Bearer ${fake.key}`) {
      throw new ArkError(401, 'AuthenticationError', `The API key or AK/SK in the request is missing or invalid. Request id: ${requestId()}`, 'Unauthorized');
    }
    if (fake.mode === 'down') throw new ArkError(500, 'InternalServiceError', 'The service encountered an unexpected internal error.', 'InternalServerError');
    if (fake.mode === 'busy') throw new ArkError(429, 'RateLimitExceeded.EndpointRPMExceeded', 'The request has exceeded the RPM rate limit.', 'TooManyRequests');
    if (!String(req.headers['content-type']).startsWith('application/json')) throw invalid('body', 'the body must be JSON');
    const body = JSON.parse(raw);
    if (typeof body !== 'object' || body === null) throw invalid('body', 'must be an object');
    const unknown = Object.keys(body).find((k) => !FIELDS.includes(k));
    if (unknown) throw invalid(unknown, 'unknown parameter');
    if (!given(body.model)) throw new ArkError(400, 'MissingParameter', 'The request failed because it is missing one or multiple required parameters: model.');
    const rules = FAKE_ARK_MODELS[body.model];
    if (!rules) throw new ArkError(404, 'InvalidEndpointOrModel.NotFound', `The model or endpoint ${body.model} does not exist or you do not have access to it.`, 'NotFound');
    if (!given(body.prompt)) throw new ArkError(400, 'MissingParameter', 'The request failed because it is missing one or multiple required parameters: prompt.', 'BadRequest', 'prompt');
    if (typeof body.prompt !== 'string') throw invalid('prompt', 'must be a string');
    const images: unknown[] = !given(body.image) ? [] : Array.isArray(body.image) ? body.image : [body.image];
    if (images.some((u) => typeof u !== 'string' || !/^(https?:\/\/|data:image\/[a-z]+;base64,)/.test(u))) throw invalid('image', 'each image is a URL or a data:image/<format>;base64 URL');
    if (images.length > rules.maxReferences) throw invalid('image', `at most ${rules.maxReferences} images`);
    const size = checkSize(body.size, rules);
    const format = body.response_format ?? 'url';
    if (!['url', 'b64_json'].includes(format)) throw invalid('response_format', 'must be url or b64_json');
    const output = body.output_format ?? 'jpeg';
    if (!['png', 'jpeg'].includes(output)) throw invalid('output_format', 'must be png or jpeg');
    if (given(body.watermark) && typeof body.watermark !== 'boolean') throw invalid('watermark', 'must be a boolean');
    const sequential = body.sequential_image_generation;
    if (given(sequential) && !rules.grouped) throw invalid('sequential_image_generation', 'not supported by this model');
    if (given(sequential) && !['auto', 'disabled'].includes(String(sequential))) throw invalid('sequential_image_generation', 'must be auto or disabled');
    const max = body.sequential_image_generation_options?.max_images ?? 15;
    if (!Number.isInteger(max) || max < 1 || max > 15) throw invalid('sequential_image_generation_options.max_images', 'must be an integer from 1 to 15');
    if (sequential === 'auto' && images.length + max > 15) throw invalid('sequential_image_generation_options.max_images', 'reference images plus max_images must be at most 15');
    if (body.prompt.includes('[sensitive]')) throw new ArkError(400, 'InputTextSensitiveContentDetected', `The request failed because the input text may contain sensitive information. Request id: ${requestId()}`);
    if (images.some((u) => String(u).includes('sensitive'))) throw new ArkError(400, 'InputImageSensitiveContentDetected', `The request failed because the input image may contain sensitive information. Request id: ${requestId()}`);
    const grouped = sequential === 'auto';
    const count = grouped ? Math.max(1, max - (body.prompt.includes('[fewer]') ? 1 : 0)) : 1;
    if (!grouped && body.prompt.includes('[output-sensitive]')) {
      throw new ArkError(400, 'OutputImageSensitiveContentDetected', `The request failed because the output image may contain sensitive information. Request id: ${requestId()}`);
    }
    const data: unknown[] = [];
    for (let i = 0; i < count; i++) {
      if (grouped && i === 1 && body.prompt.includes('[output-sensitive]')) {
        data.push({ error: { code: 'OutputImageSensitiveContentDetected', message: 'The request failed because the output image may contain sensitive information.' } });
        continue;
      }
      const bytes = await draw(size, output, `${body.prompt}:${++made}`);
      if (format === 'b64_json') data.push({ b64_json: bytes.toString('base64'), size: `${size.width}x${size.height}` });
      else {
        const name = `${made}.${output === 'png' ? 'png' : 'jpeg'}`;
        files.set(name, bytes);
        // ModelArk's links point at its object storage, signed and valid for 24 hours.
        data.push({ url: `${fake.url}/ark-content/${name}?X-Tos-Expires=86400&X-Tos-Signature=fake`, size: `${size.width}x${size.height}` });
      }
    }
    const generated = data.filter((d: any) => !d.error).length;
    return { model: body.model, created: Math.floor(Date.now() / 1000), data, usage: { generated_images: generated, output_tokens: generated * 16384, total_tokens: generated * 16384 } };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId() }).end(JSON.stringify(body));
      const path = req.url ?? '';
      if (req.method === 'GET' && path.startsWith('/ark-content/')) {
        const file = files.get(path.slice('/ark-content/'.length).split('?')[0]!);
        if (!file) return send(404, { error: { code: 'NoSuchKey', message: 'not found' } });
        fake.downloads++;
        if (fake.servedInstead) return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': fake.servedInstead.length }).end(fake.servedInstead);
        return void res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': file.length }).end(file);
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = raw ? JSON.parse(raw) : undefined;
      } catch {
        parsed = raw;
      }
      fake.requests.push({ path, headers: req.headers, body: parsed });
      if (req.method !== 'POST' || path !== '/api/v3/images/generations') return send(404, { error: { code: 'NotFound', message: `${req.method} ${path} is not an API`, param: '', type: 'NotFound' } });
      generate(req, raw).then(
        (body) => send(200, body),
        (err) => {
          if (err instanceof ArkError) return send(err.status, { error: { code: err.code, message: err.message, param: err.param, type: err.type } });
          if (err instanceof SyntaxError) return send(400, { error: { code: 'InvalidParameter', message: 'The request body is not valid JSON.', param: '', type: 'BadRequest' } });
          send(500, { error: { code: 'InternalServiceError', message: String(err), param: '', type: 'InternalServerError' } });
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
