import type { ChannelTypeEntry } from '../channel-type.ts';
import { ArkOptions, IMAGE_CALL_MS } from './ark.options.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';
import { arkCall } from './ark.http.ts';
import { ARK_IMAGE_MODELS, ArkImages } from './ark.images.ts';
import { ArkProvider } from './ark.provider.ts';
import { arkVideo } from './ark.video-setup.ts';
import { arkAvatar } from './ark.avatar-setup.ts';

// ModelArk (BytePlus / Volcengine Ark). The channel's secret is the API key (Bearer) for the data
// plane; the asset library (avatar review) is a signed OpenAPI with its own access keys, below.

export const arkChannel: ChannelTypeEntry<typeof ArkOptions> = {
  type: 'ark',
  summary: 'ModelArk (Seedream images, Seedance videos) with its API key as Bearer secret; asset-library keys in options',
  serves: ['image', 'video', 'avatar'],
  baseUrl: 'required',
  options: ArkOptions,
  taskProvider: ({ config, pricing, reviewed, upstreamCallbackUrl }) =>
    new ArkProvider({
      video: arkVideo(config, reviewed, upstreamCallbackUrl),
      avatar: arkAvatar(config, pricing, reviewed),
      image: new ArkImages({ pricing, timeoutMs: (options) => (options.timeout_seconds ? options.timeout_seconds * 1000 : Math.max(IMAGE_CALL_MS, config.upstreamTimeoutMs)) }),
    }),
  // ModelArk has no free call to ask: an image request without its prompt is refused for the missing
  // field only after the key and the model were accepted, and makes nothing.
  async test(probe) {
    const models = [...probe.channel.models];
    const ours = models.find((m) => m in ARK_IMAGE_MODELS) ?? 'imgart-5-0-lite';
    const mapped = probe.channel.model_mapping.get(ours) ?? ours;
    const model = mapped === ours ? ARK_IMAGE_MODELS[ours]! : mapped;
    try {
      await arkCall({ channel: probe.channel, method: 'POST', path: '/api/v3/images/generations', body: { model }, timeoutMs: probe.timeoutMs });
    } catch (err) {
      if (err instanceof UpstreamRejected && /\(400 MissingParameter\)/.test(err.message)) return `the API key and ${model} were accepted (nothing was generated)`;
      throw err;
    }
    throw new Error(`ModelArk made an image without a prompt for ${model}`);
  },
};
