import type { ProviderSettings } from '../core/provider-settings.ts';
import type { TaskPrices } from '../core/prices.ts';
import type { TaskProvider } from '../core/task-provider.ts';
import type { TextProvider } from '../core/text/provider.ts';
import type { Channel } from '../core/channel.ts';
import { CHANNEL_TYPES, channelType } from './registry.ts';
import type { ProviderDeps } from './channel-type.ts';
import { referenceLimits } from './reference-limits.ts';
import { setMaxAnswerBytes } from './upstream-read.ts';

/** One task provider per channel type that has one; channels carry their own URL and secret per call. */
export function createProviders(config: Readonly<ProviderSettings>, pricing: TaskPrices, more: Omit<ProviderDeps, 'config' | 'pricing' | 'references'> = {}) {
  setMaxAnswerBytes(config.upstreamMaxAnswerBytes);
  const byType = new Map<string, TaskProvider>();
  const references = referenceLimits(config);
  for (const entry of CHANNEL_TYPES) if (entry.taskProvider) byType.set(entry.type, entry.taskProvider({ config, pricing, references, ...more }));
  return (type: string): TaskProvider | undefined => byType.get(type);
}

/** The text provider for a channel (the synchronous endpoints); upstream ones carry its URL, secret and options. */
export function createTextProviders(config: Readonly<ProviderSettings>) {
  setMaxAnswerBytes(config.upstreamMaxAnswerBytes);
  const make = (channel: Channel): TextProvider | undefined => {
    const entry = channelType(channel.type);
    if (!entry?.textProvider || (entry.baseUrl === 'required' && !channel.base_url)) return undefined;
    return entry.textProvider(channel, channel.options as Record<string, unknown>, config);
  };
  // Channel rows are re-read each second as new objects, so a changed URL, secret or option gets a
  // new provider; between reads every call reuses the one made for the row (and what it prepared).
  const made = new WeakMap<Channel, TextProvider | null>();
  return (channel: Channel): TextProvider | undefined => {
    let provider = made.get(channel);
    if (provider === undefined) made.set(channel, (provider = make(channel) ?? null));
    return provider ?? undefined;
  };
}
