import { Type } from 'typebox';
import { ExtraHeaders, extraHeaders, Options, defineChannelType } from '../channel-type.ts';
import { MessagesText } from './messages.text.ts';

export const messagesChannel = defineChannelType({
  type: 'messages',
  summary: 'an upstream that speaks /v1/messages (x-api-key secret)',
  serves: ['text'],
  baseUrl: 'required',
  options: Options({ headers: Type.Optional(ExtraHeaders) }),
  textProvider: (channel, options, config) => new MessagesText(channel, config.upstreamTimeoutMs, extraHeaders(options)),
  test: async (probe) => (await probe.text()) ?? 'no model to ask',
});
