import type { ChannelTypeEntry } from './channel-type.ts';
import { arkChannel } from './ark/ark.channel.ts';
import { chatCompletionsChannel } from './chat-completions/chat-completions.channel.ts';
import { geminiChannel } from './gemini/gemini.channel.ts';
import { messagesChannel } from './messages/messages.channel.ts';
import { nativeChannel } from './native/native.channel.ts';
import { openaiChannel } from './openai/openai.channel.ts';
import { relayChannel } from './relay/relay.channel.ts';
import { simulatorChannel } from './simulator/simulator.channel.ts';

// Every channel type, once. Validation, the connection test, the console's channel form, the CLI
// help and the OpenAPI document read this list: a new type is a folder and one line here.
export const CHANNEL_TYPES: readonly ChannelTypeEntry[] = [simulatorChannel, relayChannel, chatCompletionsChannel, messagesChannel, nativeChannel, openaiChannel, geminiChannel, arkChannel];

export const CHANNEL_TYPE_NAMES: readonly string[] = CHANNEL_TYPES.map((entry) => entry.type);

const byName = new Map(CHANNEL_TYPES.map((entry) => [entry.type, entry]));

export const channelType = (name: string): ChannelTypeEntry | undefined => byName.get(name);
