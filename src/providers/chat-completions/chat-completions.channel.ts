import { Type } from 'typebox';
import { ExtraHeaders, extraHeaders, Options, defineChannelType } from '../channel-type.ts';
import { ChatCompletionsText } from './chat-completions.text.ts';

const Name = (title: string, header: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, title, description: `Sent as the ${header} header` }));

export const chatCompletionsChannel = defineChannelType({
  type: 'chat-completions',
  summary: 'an upstream that speaks /v1/chat/completions (Bearer secret)',
  serves: ['text'],
  baseUrl: 'required',
  options: Options({
    organization: Name('Organization', 'OpenAI-Organization'),
    project: Name('Project', 'OpenAI-Project'),
    headers: Type.Optional(ExtraHeaders),
  }),
  textProvider: (channel, options, config) =>
    new ChatCompletionsText(channel, config.upstreamTimeoutMs, {
      ...extraHeaders(options),
      ...(options.organization ? { 'openai-organization': options.organization } : {}),
      ...(options.project ? { 'openai-project': options.project } : {}),
    }),
  test: async (probe) => (await probe.text()) ?? 'no model to ask',
});
