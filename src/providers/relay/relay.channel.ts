import { upstreamWhole } from '../upstream-client.ts';
import { NativeText } from '../native/native.text.ts';
import { Options, type ChannelTypeEntry } from '../channel-type.ts';
import { RelayProvider } from './relay.provider.ts';

export const relayChannel: ChannelTypeEntry = {
  type: 'relay',
  summary: 'another copy of this gateway (Bearer key): image and video tasks, and text through its native endpoint',
  // Not avatar review: the assets it passes would be the other gateway's, unusable in our video
  // submits, so a caller's avatars are reviewed by a channel that keeps them here.
  serves: ['text', 'image', 'video'],
  baseUrl: 'required',
  options: Options({}),
  taskProvider: ({ config }) => new RelayProvider({ pollMs: config.relayPollMs, timeoutMs: config.upstreamTimeoutMs }),
  // A relay is another gateway of this kind: its native endpoint serves every text model.
  textProvider: (channel, _options, config) => new NativeText(channel, config.upstreamTimeoutMs),
  async test(probe) {
    const answered = await probe.text();
    if (answered) return answered;
    // A relay serving media only: the other gateway's readiness check.
    const res = await upstreamWhole({ url: new URL('/readyz', probe.channel.base_url!), timeoutMs: probe.timeoutMs });
    if (res.statusCode !== 200) throw new Error(`/readyz answered ${res.statusCode}`);
    return 'the upstream gateway is ready';
  },
};
