import { FormData, type Dispatcher } from 'undici';
import type { Channel } from '../../core/channel.ts';
import type { ImageParams } from '../../core/task-params.ts';
import { answerText, upstreamResponse } from '../upstream-client.ts';
import { paramsOf, ChannelRefused, UpstreamRejected, type Produced, type ProviderStep, type TaskCall, type TaskProvider } from '../../core/task-provider.ts';
import type { ImagesAnswer } from './openai.answers.ts';
import { fetchReferences, type FetchLimits, type ReferenceFile } from './openai.references.ts';

// OpenAI Images (gpt-image models): POST /v1/images/generations (JSON), or POST /v1/images/edits
// (multipart: `image[]` files, `mask`) when the task has reference images. Both answer at once with
// base64 images and token usage, so a task completes in its submit: there is nothing to poll.
// Request and answer shapes are the official SDK's (openai@6 resources/images.ts).

/** Our model -> the OpenAI model, unless the channel's model_mapping names another. */
export const OPENAI_IMAGE_MODELS: Readonly<Record<string, string>> = { 'imggen-2-official': 'gpt-image-2', 'imggen-2': 'gpt-image-2' };

/** A 4k image at high quality can take minutes; the call waits this long unless the channel says otherwise. */
export const IMAGE_TIMEOUT_MS = 300_000;

export interface OpenAIConnection {
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface OpenAIImagesDeps {
  /** The channel's headers (its secret, organization, project, extra headers) and timeout. */
  connection(channel: Channel): OpenAIConnection;
  /** How reference images and masks (caller URLs) are fetched: the process's shared rules. */
  references: FetchLimits;
}

/** Our normalized parameters as the fields of ImageGenerateParams / ImageEditParams. */
export function imageFields(params: ImageParams, model: string, edit: boolean): Record<string, string | number> {
  const fields: Record<string, string | number> = { model, prompt: params.prompt, n: params.n ?? 1, size: `${params.width}x${params.height}` };
  // `auto` and `<w>x<h>` were resolved to pixels at submit; transparent was downgraded to auto there.
  for (const name of ['quality', 'background', 'output_format', 'output_compression'] as const) {
    if (params[name] !== undefined) fields[name] = params[name];
  }
  // The edits endpoint has no moderation parameter (ImageEditParams): it applies only to generations.
  if (!edit && params.moderation !== undefined) fields.moderation = params.moderation;
  return fields;
}

// A spooled reference is a file-backed Blob: the form reads it from disk as it is sent.
async function editForm(fields: Record<string, string | number>, images: ReferenceFile[], mask: ReferenceFile | undefined): Promise<FormData> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  // `image[]` is how the SDK sends an array of files (internal/uploads.ts addFormValue).
  for (const [i, file] of images.entries()) form.append('image[]', await file.blob(), `image-${i}.${file.extension}`);
  if (mask) form.append('mask', await mask.blob(), `mask.${mask.extension}`);
  return form;
}

interface OpenAIError {
  status: number;
  message: string;
  code?: string;
}

/** Maps a refusal to how the task ends: a thrown plain Error means "not accepted, try another channel". */
function refusal({ status, message, code }: OpenAIError): Error {
  // The upstream's text can quote part of the key ("Incorrect API key provided: sk-ab***yz"): not repeated.
  if (status === 401 || status === 403) return new ChannelRefused('upstream_error', `The upstream refused this channel's credentials (HTTP ${status}); the operator has been notified`);
  if (status === 429 || status >= 500) return new Error(`upstream answered ${status}${code ? ` (${code})` : ''}`);
  if (code === 'moderation_blocked') return new UpstreamRejected('content_policy_violation', `The upstream's safety system refused the request: ${message}`);
  return new UpstreamRejected('upstream_error', `Upstream refused the task: ${message}`);
}

function parse(text: string): ImagesAnswer | null | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function post(url: string, connection: OpenAIConnection, body: string | FormData, signal: AbortSignal | undefined): Promise<ImagesAnswer | null> {
  let response: Dispatcher.ResponseData;
  const headers = typeof body === 'string' ? { ...connection.headers, 'content-type': 'application/json' } : connection.headers;
  try {
    response = await upstreamResponse({ url, method: 'POST', headers, body, signal, timeoutMs: connection.timeoutMs });
  } catch (err) {
    throw new Error(`upstream unreachable: ${(err as Error).message}`);
  }
  const json = parse(await answerText(response, connection.timeoutMs));
  if (response.statusCode >= 400) {
    const error = json?.error ?? {};
    const message = typeof error.message === 'string' ? error.message : `upstream answered ${response.statusCode}`;
    throw refusal({ status: response.statusCode, message, code: typeof error.code === 'string' ? error.code : undefined });
  }
  if (json === undefined) throw new Error(`upstream answered ${response.statusCode} with a body that is not JSON`);
  return json;
}

function completed(answer: ImagesAnswer | null): ProviderStep {
  const parts: Produced[] = [];
  for (const image of Array.isArray(answer?.data) ? answer.data : []) {
    if (typeof image?.b64_json === 'string') parts.push({ bytes: Buffer.from(image.b64_json, 'base64') });
    else if (typeof image?.url === 'string') parts.push({ url: image.url });
  }
  if (parts.length === 0) throw new UpstreamRejected('upstream_error', 'The upstream answered without an image');
  const input = answer?.usage?.input_tokens;
  const output = answer?.usage?.output_tokens;
  const counted = typeof input === 'number' && Number.isInteger(input) && typeof output === 'number' && Number.isInteger(output);
  return { state: 'completed', result: { images: [{ url: parts }] }, ...(counted ? { usage: { inputTokens: input, outputTokens: output } } : {}) };
}

export class OpenAIImages implements TaskProvider {
  constructor(private readonly deps: OpenAIImagesDeps) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const { channel } = call;
    const params = paramsOf(call, 'image');
    const model = call.upstreamModel !== call.task.model ? call.upstreamModel : (OPENAI_IMAGE_MODELS[call.task.model] ?? call.upstreamModel);
    const connection = this.deps.connection(channel);
    const urls: string[] = params.image_urls ?? [];
    if (urls.length === 0) {
      return completed(await post(`${channel.base_url}/v1/images/generations`, connection, JSON.stringify(imageFields(params, model, false)), call.signal));
    }
    const wanted: [string, string][] = urls.map((url, i) => [`image_urls[${i}]`, url]);
    if (params.mask_url) wanted.push(['mask_url', params.mask_url]);
    const references = await fetchReferences(wanted, this.deps.references, { account: call.task.user_id, signal: call.signal });
    try {
      const files = [...references.files];
      const mask = params.mask_url ? files.pop() : undefined;
      const form = await editForm(imageFields(params, model, true), files, mask);
      return completed(await post(`${channel.base_url}/v1/images/edits`, connection, form, call.signal));
    } finally {
      await references.release();
    }
  }

  // Submit answers with the images: a poll only comes for a task handed over before a crash of an
  // older version, and there is no upstream task to ask about.
  async poll(): Promise<ProviderStep> {
    throw new UpstreamRejected('upstream_error', 'OpenAI image calls have no task to poll');
  }
}
