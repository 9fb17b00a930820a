import { checkTarget } from '../../lib/net/target.ts';
import { extraHeaders, type ChannelTypeEntry } from '../channel-type.ts';
import { GeminiChannelOptions, IMAGE_CALL_MS } from './gemini.options.ts';
import type { GeminiModel } from './gemini.answers.ts';
import { geminiCall, modelPath } from './gemini.http.ts';
import { GEMINI_IMAGE_MODELS, GeminiImages } from './gemini.images.ts';
import { GeminiText } from './gemini.text.ts';

export const geminiChannel: ChannelTypeEntry<typeof GeminiChannelOptions> = {
  type: 'gemini',
  summary: 'the Gemini API (x-goog-api-key secret): text through generateContent, streamGenerateContent and countTokens; images through generateContent with image output',
  serves: ['image', 'text'],
  baseUrl: 'required',
  options: GeminiChannelOptions,
  textProvider: (channel, options, config) => new GeminiText(channel, config.upstreamTimeoutMs, extraHeaders(options)),
  taskProvider: ({ config, references }) =>
    new GeminiImages({
      references,
      // FETCH_ALLOW_PRIVATE lifts the rules (tests, private deployments).
      refuseReference: async (url) => {
        if (config.files.fetchAllowPrivate) return undefined;
        const verdict = await checkTarget(url, config);
        return verdict.ok ? undefined : verdict.reason;
      },
      timeoutMs: (options) => (options.timeout_seconds ? options.timeout_seconds * 1000 : Math.max(IMAGE_CALL_MS, config.upstreamTimeoutMs)),
    }),
  // A free call that proves the URL, the key and the model mapping: the model's own description.
  async test(probe) {
    const answered = await probe.text();
    if (answered) return answered;
    const models = [...probe.channel.models];
    const ours = models.find((m) => m in GEMINI_IMAGE_MODELS) ?? 'imgflash-3.1-preview';
    const mapped = probe.channel.model_mapping.get(ours) ?? ours;
    const model = mapped === ours ? GEMINI_IMAGE_MODELS[ours]! : mapped;
    const options = probe.channel.options as GeminiChannelOptions;
    const found = (await geminiCall({ channel: probe.channel, options, method: 'GET', path: modelPath(model), timeoutMs: probe.timeoutMs })) as GeminiModel | null;
    return `${found?.name ?? model} is available to this key`;
  },
};
