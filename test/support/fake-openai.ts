import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

// The OpenAI Images API as far as the gateway uses it, strict where the real one is. Shapes are the
// ones of the official SDK (node_modules/openai/resources/images.d.ts, openai@6.49): POST
// /v1/images/generations takes JSON (ImageGenerateParams), POST /v1/images/edits takes multipart
// (ImageEditParams: `image` or, for several, `image[]` files, an optional `mask` file, every other
// field as a string); both answer ImagesResponse {created, data[].b64_json, background, output_format,
// quality, size, usage{input_tokens, input_tokens_details, output_tokens, total_tokens}}. Errors are
// {error: {message, type, param, code}}: 401 for a missing or wrong key (the message shows part of the
// key, as OpenAI's "Incorrect API key provided: sk-ab***yz" does), 400 `unknown_parameter`,
// `invalid_value`, `moderation_blocked` (type image_generation_user_error) for the safety system.

export const FAKE_OPENAI_KEY = 'sk-fake-openai-key-0123456789abcdef';

export interface SeenRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The JSON body, or the multipart form's text fields. */
  fields: Record<string, unknown>;
  /** Multipart files by field name, in order. */
  files: { field: string; name: string; type: string; bytes: Buffer }[];
}

/** A scripted answer for the next request (instead of the normal one). */
export type Scripted = { status: number; error?: { message: string; type?: string; code?: string | null } } | 'drop';

export interface FakeOpenAI {
  url: string;
  key: string;
  requests: SeenRequest[];
  /** Every image answered, in order (base64-decoded), to compare with what the gateway serves. */
  produced: Buffer[];
  /** Answers used before the normal ones, first in first out. */
  script: Scripted[];
  /** Every request answers this (e.g. 503) or is dropped, until set back to undefined. */
  down?: Scripted;
  close(): Promise<void>;
}

const GEN_FIELDS = new Set(['prompt', 'model', 'n', 'size', 'quality', 'background', 'moderation', 'output_format', 'output_compression', 'partial_images', 'response_format', 'stream', 'style', 'user']);
const EDIT_FIELDS = new Set(['prompt', 'model', 'n', 'size', 'quality', 'background', 'input_fidelity', 'output_format', 'output_compression', 'partial_images', 'response_format', 'stream', 'user']);
const ONE_OF: Record<string, string[]> = {
  quality: ['auto', 'low', 'medium', 'high', 'standard', 'hd'],
  background: ['auto', 'opaque', 'transparent'],
  moderation: ['auto', 'low'],
  output_format: ['png', 'jpeg', 'webp'],
};
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

/** gpt-image-2 sizes as the SDK documents them: `auto`, or WxH with both sides multiples of 16, ratio within 3:1, at most 3840x2160's pixels. */
function checkSize(size: string) {
  if (size === 'auto') return { width: 1024, height: 1024 };
  const m = /^(\d+)x(\d+)$/.exec(size);
  const [w, h] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  const ok = m && w % 16 === 0 && h % 16 === 0 && Math.max(w, h) <= 3840 && w * h <= 3840 * 2160 && Math.max(w / h, h / w) <= 3;
  if (!ok) throw new ApiError(400, `Invalid value: '${size}'. Supported sizes are auto or WIDTHxHEIGHT within the model's limits.`, 'size', 'invalid_value');
  return { width: w, height: h };
}

function checkFields(fields: Record<string, unknown>, known: Set<string>, fromForm: boolean) {
  for (const name of Object.keys(fields)) if (!known.has(name)) throw new ApiError(400, `Unknown parameter: '${name}'.`, name, 'unknown_parameter');
  if (typeof fields.prompt !== 'string' || fields.prompt === '') throw new ApiError(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
  for (const [name, values] of Object.entries(ONE_OF)) {
    if (fields[name] !== undefined && !values.includes(String(fields[name]))) throw new ApiError(400, `Invalid value: '${fields[name]}'. Supported values are: ${values.join(', ')}.`, name, 'invalid_value');
  }
  // gpt-image models return base64 only; response_format belongs to dall-e.
  if (fields.response_format !== undefined && String(fields.model ?? '').startsWith('gpt-image')) throw new ApiError(400, "Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter');
  const int = (name: string, min: number, max: number) => {
    if (fields[name] === undefined) return undefined;
    const value = fromForm ? Number(fields[name]) : fields[name];
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new ApiError(400, `Invalid type for '${name}': expected an integer, but got a ${typeof fields[name]} instead.`, name, 'invalid_type');
    if (value < min || value > max) throw new ApiError(400, `Invalid '${name}': integer out of range [${min}, ${max}].`, name, 'integer_out_of_range');
    return value;
  };
  const n = int('n', 1, 10) ?? 1;
  if (int('output_compression', 0, 100) !== undefined && !['jpeg', 'webp'].includes(String(fields.output_format))) {
    throw new ApiError(400, 'output_compression is only supported for jpeg and webp output formats.', 'output_compression', 'invalid_value');
  }
  if (fields.background === 'transparent' && String(fields.model ?? '').startsWith('gpt-image-2')) {
    throw new ApiError(400, 'Transparent background is not supported for this model.', 'background', 'invalid_value');
  }
  return { n, ...checkSize(String(fields.size ?? 'auto')) };
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function parseRequest(req: http.IncomingMessage): Promise<SeenRequest> {
  const body = await readBody(req);
  const type = String(req.headers['content-type'] ?? '');
  const seen: SeenRequest = { path: req.url ?? '', headers: req.headers, fields: {}, files: [] };
  if (req.url === '/v1/images/generations') {
    if (!type.startsWith('application/json')) throw new ApiError(400, 'Invalid content type: expected application/json.');
    try {
      seen.fields = JSON.parse(body.toString('utf8'));
    } catch {
      throw new ApiError(400, 'We could not parse the JSON body of your request.');
    }
    return seen;
  }
  if (!type.startsWith('multipart/form-data')) throw new ApiError(400, "Invalid content type. image edit endpoint only accepts 'multipart/form-data'.");
  const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) }).formData();
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') seen.fields[field] = value;
    else seen.files.push({ field, name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  return seen;
}

function checkEditFiles(seen: SeenRequest) {
  const images = seen.files.filter((f) => f.field === 'image' || f.field === 'image[]');
  const others = seen.files.filter((f) => f.field !== 'image' && f.field !== 'image[]' && f.field !== 'mask');
  if (others.length > 0) throw new ApiError(400, `Unknown parameter: '${others[0]!.field}'.`, others[0]!.field, 'unknown_parameter');
  if (images.length === 0) throw new ApiError(400, "Missing required parameter: 'image'.", 'image', 'missing_required_parameter');
  if (images.length > 16) throw new ApiError(400, 'Too many images: at most 16.', 'image', 'invalid_value');
  const masks = seen.files.filter((f) => f.field === 'mask');
  if (masks.length > 1) throw new ApiError(400, "Invalid 'mask': expected one file.", 'mask', 'invalid_value');
  for (const file of [...images, ...masks]) {
    if (!IMAGE_TYPES.includes(file.type)) throw new ApiError(400, `Invalid file '${file.field}': unsupported mimetype ('${file.type}'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.`, file.field, 'invalid_value');
  }
  if (masks[0] && masks[0].type !== 'image/png') throw new ApiError(400, "Invalid 'mask': must be a PNG file.", 'mask', 'invalid_value');
}

let colour = 0;
async function render(width: number, height: number, format: string, quality: number | undefined): Promise<Buffer> {
  colour = (colour + 53) % 256;
  const image = sharp({ create: { width, height, channels: 3, background: { r: colour, g: 255 - colour, b: 90 } } });
  if (format === 'jpeg') return image.jpeg({ quality: quality || 1 }).toBuffer();
  if (format === 'webp') return image.webp({ quality: quality || 1 }).toBuffer();
  return image.png().toBuffer();
}

function authorize(req: http.IncomingMessage, key: string) {
  const header = String(req.headers.authorization ?? '');
  if (!header) throw new ApiError(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
  const given = header.replace(/^Bearer /, '');
  if (given !== key) throw new ApiError(401, `Incorrect API key provided: ${given.slice(0, 6)}***${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`, null, 'invalid_api_key');
}

export async function startFakeOpenAI(key = FAKE_OPENAI_KEY): Promise<FakeOpenAI> {
  const fake = { key, requests: [], produced: [], script: [] } as unknown as FakeOpenAI;
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const scripted = fake.script.shift() ?? fake.down;
    if (scripted === 'drop') return req.socket.destroy();
    try {
      const model = req.method === 'GET' ? /^\/v1\/models\/([^/?]+)$/.exec(req.url ?? '') : null;
      if (!model && (req.method !== 'POST' || (req.url !== '/v1/images/generations' && req.url !== '/v1/images/edits'))) throw new ApiError(404, `Invalid URL (${req.method} ${req.url})`);
      authorize(req, fake.key);
      // Models.retrieve: {id, object, created, owned_by}.
      if (model) return send(200, { id: decodeURIComponent(model[1]!), object: 'model', created: 1_700_000_000, owned_by: 'system' });
      const seen = await parseRequest(req);
      fake.requests.push(seen);
      if (scripted) throw new ApiError(scripted.status, scripted.error?.message ?? 'scripted', null, scripted.error?.code ?? null, scripted.error?.type);
      const edit = req.url === '/v1/images/edits';
      const { n, width, height } = checkFields(seen.fields, edit ? EDIT_FIELDS : GEN_FIELDS, edit);
      if (edit) checkEditFiles(seen);
      if (String(seen.fields.prompt).includes('[blocked]')) {
        throw new ApiError(400, 'Your request was rejected by the safety system. If you believe this is an error, contact us.', null, 'moderation_blocked', 'image_generation_user_error');
      }
      const format = String(seen.fields.output_format ?? 'png');
      const compression = seen.fields.output_compression === undefined ? undefined : Number(seen.fields.output_compression);
      const images: Buffer[] = [];
      for (let i = 0; i < n; i++) images.push(await render(width, height, format, compression));
      fake.produced.push(...images);
      const textTokens = Math.ceil(String(seen.fields.prompt).length / 4);
      const imageTokens = seen.files.filter((f) => f.field !== 'mask').length * 65;
      const output = n * 272;
      send(200, {
        created: Math.floor(Date.now() / 1000),
        background: seen.fields.background === 'transparent' ? 'transparent' : 'opaque',
        data: images.map((bytes) => ({ b64_json: bytes.toString('base64') })),
        output_format: format,
        quality: seen.fields.quality && seen.fields.quality !== 'auto' ? seen.fields.quality : 'low',
        size: `${width}x${height}`,
        usage: {
          input_tokens: textTokens + imageTokens,
          input_tokens_details: { image_tokens: imageTokens, text_tokens: textTokens },
          output_tokens: output,
          total_tokens: textTokens + imageTokens + output,
          output_tokens_details: { image_tokens: output, text_tokens: 0 },
        },
      });
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, 'The server had an error while processing your request.', null, null, 'server_error');
      send(e.status, { error: { message: e.message, type: e.type, param: e.param, code: e.code } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
