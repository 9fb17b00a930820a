import { Readable } from 'node:stream';
import { sniffExtension } from '../../lib/content-types.ts';
import type { ImageParams } from '../../core/task-params.ts';
import { fetchReferences, type FetchLimits, type ReferenceFile } from '../openai/openai.references.ts';
import { paramsOf, type ProviderStep, type TaskCall, type TaskProvider } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import type { GenerateContentAnswer } from './gemini.answers.ts';
import type { GeminiChannelOptions } from './gemini.options.ts';
import { geminiCall, modelPath } from './gemini.http.ts';

// Images from the Gemini API: generateContent with responseModalities [IMAGE] and imageConfig
// {aspectRatio, imageSize}; the image comes back as inlineData, and those bytes are the result.
// An image model makes one candidate per call, so `n` images are n calls side by side.

/** Our image models and the Gemini models they stand for, unless the channel's model_mapping says otherwise. */
export const GEMINI_IMAGE_MODELS: Record<string, string> = {
  'imgflash-3.1-preview': 'gemini-3.1-flash-image-preview',
  'imgpro-3-preview': 'gemini-3-pro-image-preview',
  'imglite-3.1': 'gemini-3.1-flash-lite-image',
};

// Safety and policy endings of a candidate (FinishReason of @google/genai): the task was refused.
const REFUSED = new Set(['SAFETY', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'RECITATION', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

// `1k` -> `1K`: the API takes only the upper-case form; our 0.5k tier is its "512".
const imageSize = (resolution: string) => (resolution === '0.5k' ? '512' : resolution.toUpperCase());

const FORMATS = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

export interface GeminiImagesDeps {
  /** How callers' reference URLs are fetched: the process's shared rules. */
  references: FetchLimits;
  /** Why a caller's URL may not be fetched (the callback address rules), or undefined when it may. */
  refuseReference(url: string): Promise<string | undefined>;
  timeoutMs(options: GeminiChannelOptions): number;
}

/** The model to ask: the channel's mapping, else ours. */
export function geminiModel(call: TaskCall): string {
  return call.upstreamModel === call.task.model ? (GEMINI_IMAGE_MODELS[call.task.model] ?? call.upstreamModel) : call.upstreamModel;
}

interface Made {
  image?: Buffer;
  refused?: string;
  noImage?: string;
  inputTokens: number;
  outputTokens: number;
}

function readAnswer(answer: GenerateContentAnswer | null): Made {
  const usage = answer?.usageMetadata ?? {};
  const made: Made = { inputTokens: usage.promptTokenCount ?? 0, outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0) };
  const blocked = answer?.promptFeedback?.blockReason;
  if (blocked) return { ...made, refused: `The prompt was blocked by the upstream's safety system (${blocked})` };
  const candidate = answer?.candidates?.[0];
  const reason = candidate?.finishReason;
  if (reason !== undefined && REFUSED.has(reason)) return { ...made, refused: `The upstream's safety system refused the image (${reason})` };
  // Draft images of a thinking model carry `thought: true`; the answer is the last image that does not.
  const parts = candidate?.content?.parts ?? [];
  const image = parts.filter((p) => p?.inlineData?.data && p.thought !== true).at(-1)?.inlineData?.data;
  if (!image) {
    const said = parts.map((p) => p?.text).filter((t) => typeof t === 'string').join(' ').slice(0, 200);
    return { ...made, noImage: `The upstream answered without an image (${reason ?? 'no candidate'})${said ? `: ${said}` : ''}` };
  }
  return { ...made, image: Buffer.from(image, 'base64') };
}

/**
 * Gemini chooses its own format. Its bytes are the result as they came unless the caller asked a
 * format they are not in, or a compression: only then are they re-encoded.
 */
async function inFormat(bytes: Buffer, params: ImageParams): Promise<Buffer> {
  const format = params.output_format;
  const compression = params.output_compression;
  if (compression === undefined && (!params.format_asked || sniffExtension(bytes.subarray(0, 12)) === FORMATS[format])) return bytes;
  const { default: sharp } = await import('sharp');
  return sharp(bytes).toFormat(format, compression === undefined ? {} : { quality: Math.max(1, compression) }).toBuffer();
}

/** Base64 of a stream, piece by piece: each piece a whole number of 3-byte groups but the last. */
async function* base64(bytes: Readable): AsyncGenerator<string> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of bytes) {
    const all = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    const cut = all.length - (all.length % 3);
    yield all.toString('base64', 0, cut);
    rest = all.subarray(cut);
  }
  if (rest.length > 0) yield rest.toString('base64');
}

/**
 * The generateContent body with the references inline, written as it is sent: the references are
 * read from where they wait (a spool file for large ones) instead of being held as one JSON string.
 */
async function* requestBody(prompt: string, references: ReferenceFile[], generationConfig: unknown): AsyncGenerator<string> {
  yield `{"contents":[{"role":"user","parts":[${JSON.stringify({ text: prompt })}`;
  for (const reference of references) {
    yield `,{"inlineData":{"mimeType":${JSON.stringify(reference.contentType)},"data":"`;
    yield* base64(reference.stream());
    yield '"}}';
  }
  yield `]}],"generationConfig":${JSON.stringify(generationConfig)}}`;
}

export class GeminiImages implements TaskProvider {
  constructor(private readonly deps: GeminiImagesDeps) {}

  async submit(call: TaskCall): Promise<ProviderStep> {
    const { channel } = call;
    const params = paramsOf(call, 'image');
    const options = channel.options as GeminiChannelOptions;
    const timeoutMs = this.deps.timeoutMs(options);
    const urls: [string, string][] = ((params.image_urls ?? []) as string[]).map((url, i) => [`image_urls[${i}]`, url]);
    for (const [field, url] of urls) {
      // The dispatcher checks the addresses a name resolves to; an address literal, a port and our own
      // host are checked here, before anything is fetched.
      const refused = url.startsWith('data:') ? undefined : await this.deps.refuseReference(url);
      if (refused) return { state: 'failed', code: 'task_failed', message: `${field} could not be used: ${refused}` };
    }
    const references = await fetchReferences(urls, this.deps.references, { account: call.task.user_id, signal: call.signal });
    const generationConfig = { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: params.size, imageSize: imageSize(params.resolution) } };
    const bodyStream = () => Readable.from(requestBody(params.prompt, references.files, generationConfig));
    const path = `${modelPath(geminiModel(call))}:generateContent`;
    let answers: Made[];
    try {
      answers = await Promise.all(
        Array.from({ length: params.n ?? 1 }, () =>
          geminiCall({ channel, options, method: 'POST', path, bodyStream, timeoutMs, signal: call.signal }).then((answer) => readAnswer(answer as GenerateContentAnswer | null)),
        ),
      );
    } finally {
      await references.release();
    }
    const refused = answers.find((a) => a.refused);
    if (refused) return { state: 'failed', code: 'content_policy_violation', message: refused.refused! };
    const empty = answers.find((a) => !a.image);
    if (empty) throw new UpstreamRejected('upstream_error', empty.noImage!);
    const images = await Promise.all(answers.map((a) => inFormat(a.image!, params)));
    const usage = answers.reduce((sum, a) => ({ inputTokens: sum.inputTokens + a.inputTokens, outputTokens: sum.outputTokens + a.outputTokens }), { inputTokens: 0, outputTokens: 0 });
    return { state: 'completed', result: { images: [{ url: images.map((bytes) => ({ bytes })) }] }, usage };
  }

  // Every call ends at submit; a task found open here was handed over by a process that stopped
  // before it could record the answer, and the answer is gone.
  async poll(): Promise<ProviderStep> {
    return { state: 'failed', code: 'upstream_error', message: 'The Gemini answer was lost before it was stored' };
  }
}
