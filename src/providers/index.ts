import type { Config } from '../config.ts';
import type { Pricing } from '../modules/billing/pricing.ts';
import { RelayProvider } from './relay/relay.provider.ts';
import { SimulatorProvider } from './simulator/simulator.provider.ts';
import type { TaskProvider } from './types.ts';
import type { TextProvider } from '../modules/text/text.types.ts';
import { SimulatorText } from './simulator/text.ts';
import { ChatCompletionsText } from './chat-completions/chat-completions.text.ts';
import { MessagesText } from './messages/messages.text.ts';
import { NativeText } from './native/native.text.ts';
import type { Channel } from '../db/types.ts';

/** One provider instance per channel type; channels carry their own URL and secret per call. */
export function createProviders(config: Readonly<Config>, pricing: Pricing) {
  const byType: Record<string, TaskProvider> = {
    simulator: new SimulatorProvider({ latencyMs: config.simulatorLatencyMs, pricing }),
    relay: new RelayProvider({ pollMs: config.relayPollMs, timeoutMs: config.upstreamTimeoutMs }),
  };
  return (type: string): TaskProvider | undefined => byType[type];
}

/** The text provider for a channel (the synchronous endpoints); upstream ones carry its URL and secret. */
export function createTextProviders(config: Readonly<Config>) {
  const simulator = new SimulatorText();
  const make = (channel: Channel): TextProvider | undefined => {
    if (channel.type === 'simulator') return simulator;
    if (!channel.base_url) return undefined;
    if (channel.type === 'chat-completions') return new ChatCompletionsText(channel, config.upstreamTimeoutMs);
    if (channel.type === 'messages') return new MessagesText(channel, config.upstreamTimeoutMs);
    // A relay is another gateway of this kind: its native endpoint serves every text model.
    if (channel.type === 'native' || channel.type === 'relay') return new NativeText(channel, config.upstreamTimeoutMs);
    return undefined;
  };
  // Channel rows are re-read each second as new objects, so a changed URL or secret gets a new
  // provider; between reads every call reuses the one made for the row (and what it prepared).
  const made = new WeakMap<Channel, TextProvider | null>();
  return (channel: Channel): TextProvider | undefined => {
    let provider = made.get(channel);
    if (provider === undefined) made.set(channel, (provider = make(channel) ?? null));
    return provider ?? undefined;
  };
}
