import type { FinishReason, TextChunk, TextRequest, TextResult } from '../../core/text/provider.ts';
import { usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import { clientError } from '../text-refusal.ts';
import { sseData, UpstreamText } from '../upstream-http.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import type { Channel } from '../../core/channel.ts';
import { geminiClasses, type GenerateContentAnswer } from '../gemini/gemini.answers.ts';
import { lineFeeds } from '../gemini/gemini.text.ts';

// An upstream that speaks the native content/parts format: the caller's optional fields
// (generationConfig, safetySettings, systemInstruction) pass through as they came. Answers may be
// bare or wrapped in {code, data} (another gateway of this kind).

function toNative(request: TextRequest) {
  const passthrough = request.passthrough ?? {};
  return {
    contents: request.messages.map((m) => ({
      role: m.role === 'assistant' ? 'model' : 'user',
      parts: m.parts.map((p) => (p.type === 'text' ? { text: p.text } : { inlineData: { mimeType: p.mediaType, data: p.data } })),
    })),
    ...(passthrough.systemInstruction ? { systemInstruction: passthrough.systemInstruction } : request.system ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
    generationConfig: { ...((passthrough.generationConfig as object) ?? {}), maxOutputTokens: request.maxTokens },
    ...(passthrough.safetySettings ? { safetySettings: passthrough.safetySettings } : {}),
  };
}

const finishOf = (reason: unknown): FinishReason => (reason === 'MAX_TOKENS' ? 'max_tokens' : 'stop');
const textOf = (data: GenerateContentAnswer | null) => (data?.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '').join('');

/** The Gemini format, bare or wrapped in {code, data} by another gateway of this kind. */
type NativeAnswer = GenerateContentAnswer & { code?: number; data?: GenerateContentAnswer };

export class NativeText extends UpstreamText {
  constructor(channel: Channel, timeoutMs: number, extraHeaders: Record<string, string> = {}) {
    super(channel, timeoutMs, { ...extraHeaders, ...(channel.secret ? { authorization: `Bearer ${channel.secret}` } : {}) });
  }

  private pathOf(request: TextRequest, method: string): string {
    return `/v1beta/models/${encodeURIComponent(request.model)}:${method}`;
  }

  async generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    const response = await this.postWhole(this.pathOf(request, 'generateContent'), toNative(request), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response);
    const json = response.json() as NativeAnswer | null;
    const data = json?.data ?? json;
    const text = textOf(data);
    return {
      text,
      finish: finishOf(data?.candidates?.[0]?.finishReason),
      stopSequence: null,
      usage: usageOf(geminiClasses(data?.usageMetadata), request, text),
    };
  }

  async *stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    const response = await this.post(this.pathOf(request, 'streamGenerateContent?alt=sse'), toNative(request), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response.body);
    let produced = '';
    let finish: FinishReason = 'stop';
    let usage: ReportedUsage | undefined;
    // CRLF between events as the Gemini API writes them, or LF.
    for await (const raw of sseData(lineFeeds(response.body))) {
      const parsed: NativeAnswer | null = JSON.parse(raw);
      const data = parsed?.data ?? parsed;
      const text = textOf(data);
      if (text) {
        produced += text;
        yield { type: 'delta', text };
      }
      if (data?.candidates?.[0]?.finishReason) finish = finishOf(data.candidates[0].finishReason);
      const now = geminiClasses(data?.usageMetadata);
      if (now) yield { type: 'usage', usage: (usage = now) };
    }
    // A count the upstream left out (or sent as something else than a count) is ours.
    yield { type: 'end', finish, stopSequence: null, usage: usageOf(usage, request, produced) };
  }
}
