import { Type, type Static } from 'typebox';
import { upstreamWhole } from '../upstream-client.ts';
import type { Channel } from '../../core/channel.ts';
import { ExtraHeaders, extraHeaders, Options, defineChannelType } from '../channel-type.ts';
import { IMAGE_TIMEOUT_MS, OPENAI_IMAGE_MODELS, OpenAIImages } from './openai.images.ts';
import { OpenAIText } from './openai.text.ts';

// The OpenAI API: images (imggen-2-official, imggen-2) and text through /v1/chat/completions.

const Name = (title: string, header: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, title, description: `Sent as the ${header} header` }));

const OpenAIOptions = Options({
  organization: Name('Organization', 'OpenAI-Organization'),
  project: Name('Project', 'OpenAI-Project'),
  image_timeout_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 900, title: 'Image timeout (s)', description: `How long one image call may take (default ${IMAGE_TIMEOUT_MS / 1000})` })),
  headers: Type.Optional(ExtraHeaders),
});

/** A channel's options as stored (they were checked against the schema when written). */
type OpenAIOptions = Static<typeof OpenAIOptions>;

/** The headers of every call: the channel's extra headers first, so its own auth and names win. */
function headersOf(channel: Channel, options: OpenAIOptions): Record<string, string> {
  return {
    ...extraHeaders(options),
    ...(channel.secret ? { authorization: `Bearer ${channel.secret}` } : {}),
    ...(options.organization ? { 'openai-organization': options.organization } : {}),
    ...(options.project ? { 'openai-project': options.project } : {}),
  };
}

const optionsOf = (channel: Channel) => channel.options as OpenAIOptions;

export const openaiChannel = defineChannelType({
  type: 'openai',
  summary: `the OpenAI API (Bearer secret): text through /v1/chat/completions, images through /v1/images/generations and /v1/images/edits (default models: ${Object.entries(OPENAI_IMAGE_MODELS).map(([ours, theirs]) => `${ours} -> ${theirs}`).join(', ')})`,
  serves: ['image', 'text'],
  baseUrl: 'required',
  options: OpenAIOptions,
  textProvider: (channel, options, config) => new OpenAIText(channel, config.upstreamTimeoutMs, headersOf(channel, options)),
  taskProvider: ({ config, references }) =>
    new OpenAIImages({
      connection(channel) {
        const options = optionsOf(channel);
        const timeoutMs = options.image_timeout_seconds ? options.image_timeout_seconds * 1000 : Math.max(IMAGE_TIMEOUT_MS, config.upstreamTimeoutMs);
        return { headers: headersOf(channel, options), timeoutMs };
      },
      references,
    }),
  // One free, real call: the model the channel sends for its first image model (GET /v1/models/{model}).
  async test(probe) {
    const answered = await probe.text();
    if (answered) return answered;
    const served = [...probe.channel.models];
    const ours = served.find((m) => m in OPENAI_IMAGE_MODELS) ?? 'imggen-2-official';
    const model = probe.channel.model_mapping.get(ours) ?? OPENAI_IMAGE_MODELS[ours]!;
    const res = await upstreamWhole({
      url: probe.channel.base_url ?? '',
      path: `/v1/models/${encodeURIComponent(model)}`,
      headers: headersOf(probe.channel, optionsOf(probe.channel)),
      timeoutMs: probe.timeoutMs,
    });
    if (res.statusCode === 401 || res.statusCode === 403) throw new Error(`the upstream refused the secret (HTTP ${res.statusCode})`);
    if (res.statusCode !== 200) throw new Error(`GET /v1/models/${model} answered ${res.statusCode}`);
    return `${model} is available`;
  },
});
