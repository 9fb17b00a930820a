import type { Channel } from '../../core/channel.ts';
import type { Json, WireCall } from '../../core/text/index.ts';
import { FORMATS } from '../../formats/index.ts';
import { badGateway, badRequest } from '../../core/errors.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import type { FinishReason, TextChunk, TextRequest, TextResult } from '../../core/text/provider.ts';
import { usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import { sseData, UpstreamText } from '../upstream-http.ts';
import { geminiClasses, type CountTokensAnswer, type GeminiError, type GenerateContentAnswer } from './gemini.answers.ts';
import { modelPath } from './gemini.http.ts';
import { wireGenerate, wireStream, type WireRoute } from '../wire-text.ts';

// Text on the Gemini API as @google/genai calls it: POST /v1beta/models/{m}:generateContent,
// :streamGenerateContent?alt=sse and :countTokens, the key in `x-goog-api-key`, bare answers (not
// wrapped). A native caller's generationConfig, safetySettings and systemInstruction pass through.

function contents(request: TextRequest) {
  return request.messages.map((m) => ({
    role: m.role === 'assistant' ? 'model' : 'user',
    parts: m.parts.map((p) => (p.type === 'text' ? { text: p.text } : { inlineData: { mimeType: p.mediaType, data: p.data } })),
  }));
}

/** A wire call's body as generateContent would send it: the caller's own when it is in this format. */
const countedBody = (wire: WireCall, model: string): Json =>
  wire.format === 'gemini' && !wire.rewritten ? wire.body : FORMATS.gemini.encodeRequest(wire.request, model);

const systemOf = (request: TextRequest) => request.passthrough?.systemInstruction ?? (request.system ? { parts: [{ text: request.system }] } : undefined);

function toGemini(request: TextRequest) {
  const passthrough = request.passthrough ?? {};
  const system = systemOf(request);
  return {
    contents: contents(request),
    ...(system ? { systemInstruction: system } : {}),
    generationConfig: {
      ...(passthrough.generationConfig as object | undefined),
      maxOutputTokens: request.maxTokens,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.stopSequences?.length ? { stopSequences: request.stopSequences } : {}),
    },
    ...(passthrough.safetySettings ? { safetySettings: passthrough.safetySettings } : {}),
  };
}

/**
 * The Gemini API ends its events with CRLF pairs (as @google/genai expects: it splits on \r\n\r\n
 * too); lines are normalized to LF for the SSE reader, and bytes decoded as a stream, so a character
 * split between two network chunks is not broken.
 */
export async function* lineFeeds(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let carry = '';
  for await (const chunk of body) {
    let text = carry + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    carry = text.endsWith('\r') ? '\r' : '';
    if (carry) text = text.slice(0, -1);
    yield text.replace(/\r\n?/g, '\n');
  }
  if (carry) yield '\n';
}

const finishOf = (reason: unknown): FinishReason => (reason === 'MAX_TOKENS' ? 'max_tokens' : 'stop');
const textOf = (data: GenerateContentAnswer | null) => (data?.candidates?.[0]?.content?.parts ?? []).filter((p) => !p.thought).map((p) => p.text ?? '').join('');

/** A refusal: the caller's mistake is theirs (400/404); a refused key is the channel's, never shown. */
async function refusal(statusCode: number, body: { text(): string | Promise<string> }): Promise<never> {
  let error: GeminiError | undefined;
  try {
    error = JSON.parse(await body.text())?.error;
  } catch {
    // not JSON: only the status is known
  }
  const keyRefused = statusCode === 401 || statusCode === 403 || (Array.isArray(error?.details) && error.details.some((d) => d?.reason === 'API_KEY_INVALID'));
  if (!keyRefused && (statusCode === 400 || statusCode === 404)) throw badRequest(`upstream: ${typeof error?.message === 'string' ? error.message : `answered ${statusCode}`}`);
  throw badGateway(`upstream refused the call (${statusCode})`);
}

export class GeminiText extends UpstreamText {
  readonly speaksWire = true;
  private readonly wire: WireRoute = {
    speaks: 'gemini',
    path: (model, stream) => `/v1beta${modelPath(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    refuse: refusal,
  };

  constructor(channel: Channel, timeoutMs: number, extraHeaders: Record<string, string> = {}) {
    super(channel, timeoutMs, { ...extraHeaders, 'x-goog-api-key': channel.secret ?? '' });
  }

  private pathOf(request: TextRequest, method: string): string {
    return `/v1beta${modelPath(request.model)}:${method}`;
  }

  generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    // A wire call's own promise, not one wrapped by an async function (each wrapper costs turns of the microtask queue).
    if (request.wire) return wireGenerate(this, this.wire, request, signal);
    return this.generateText(request, signal);
  }

  private async generateText(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    const response = await this.postWhole(this.pathOf(request, 'generateContent'), toGemini(request), signal);
    if (response.statusCode >= 400) return refusal(response.statusCode, response);
    const data = response.json() as GenerateContentAnswer | null;
    const text = textOf(data);
    return {
      text,
      finish: finishOf(data?.candidates?.[0]?.finishReason),
      stopSequence: null,
      usage: usageOf(geminiClasses(data?.usageMetadata), request, text),
    };
  }

  stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    // wireStream's own generator, not one delegating to it (as generate does with its promise).
    if (request.wire) return wireStream(this, this.wire, request, signal);
    return this.streamText(request, signal);
  }

  private async *streamText(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    const response = await this.post(this.pathOf(request, 'streamGenerateContent?alt=sse'), toGemini(request), signal);
    if (response.statusCode >= 400) return refusal(response.statusCode, response.body);
    let produced = '';
    let finish: FinishReason = 'stop';
    let usage: ReportedUsage | undefined;
    for await (const raw of sseData(lineFeeds(response.body))) {
      const data: GenerateContentAnswer | null = JSON.parse(raw);
      if (data?.error) throw badGateway(`upstream stream failed: ${String(data.error.message ?? 'error')}`);
      const text = textOf(data);
      if (text) {
        produced += text;
        yield { type: 'delta', text };
      }
      if (data?.candidates?.[0]?.finishReason) finish = finishOf(data.candidates[0].finishReason);
      const now = geminiClasses(data?.usageMetadata);
      if (now) yield { type: 'usage', usage: (usage = now) };
    }
    yield { type: 'end', finish, stopSequence: null, usage: usageOf(usage, request, produced) };
  }

  /**
   * The Gemini API's own count; a system instruction needs the generateContentRequest form, and so
   * does a wire call (its tools and tool turns are counted as generateContent would send them).
   */
  async countTokens(request: TextRequest, signal: CallSignal): Promise<number> {
    const system = systemOf(request);
    const model = `models/${request.model.replace(/^models\//, '')}`;
    const body = request.wire
      ? { generateContentRequest: { ...countedBody(request.wire, request.model), model } }
      : system ? { generateContentRequest: { model, contents: contents(request), systemInstruction: system } } : { contents: contents(request) };
    const response = await this.postWhole(this.pathOf(request, 'countTokens'), body, signal);
    if (response.statusCode >= 400) return refusal(response.statusCode, response);
    const total = (response.json() as CountTokensAnswer | null)?.totalTokens;
    if (typeof total !== 'number') throw badGateway('upstream countTokens answered without totalTokens');
    return total;
  }
}
