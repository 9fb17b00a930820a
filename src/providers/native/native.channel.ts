import { Type } from 'typebox';
import { ExtraHeaders, extraHeaders, Options, defineChannelType } from '../channel-type.ts';
import { NativeText } from './native.text.ts';

export const nativeChannel = defineChannelType({
  type: 'native',
  summary: "another gateway's native generateContent endpoint (Bearer secret)",
  serves: ['text'],
  baseUrl: 'required',
  options: Options({ headers: Type.Optional(ExtraHeaders) }),
  textProvider: (channel, options, config) => new NativeText(channel, config.upstreamTimeoutMs, extraHeaders(options)),
  test: async (probe) => (await probe.text()) ?? 'no model to ask',
});
