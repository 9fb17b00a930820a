import type { Channel } from '../../core/channel.ts';
import type { TextUsage } from '../../core/text/provider.ts';
import type { UsageClasses } from '../../core/usage.ts';
import type { UsageCost } from '../billing/usage-cost.ts';
import { errorOf, GONE } from '../calls/call-entry.ts';
import type { TextCall } from './text-call.ts';

// What the text path tells a call's log line: the channel that answered, how the call ended, and
// the usage and cost its settlement charged (the same numbers, so the log agrees with the ledger).

const ENDED_EARLY = { code: 'bad_gateway', message: 'The upstream ended the stream before its end' };

export function noteText(call: TextCall, channel: Channel | undefined, outcome: 'ok' | 'failed' | 'aborted', usage?: TextUsage, cost?: UsageCost, err?: unknown): void {
  const log = call.log;
  if (!log) return;
  const facts = log.facts;
  facts.model = call.request.model;
  if (channel) facts.channel = { id: channel.id, name: channel.name, type: channel.type };
  facts.outcome = outcome;
  // The classes alone (a TextUsage carries more), copied member by member: this runs on every call.
  if (usage) facts.usage = { input: usage.input, cache_read: usage.cache_read, cache_write: usage.cache_write, output: usage.output } satisfies UsageClasses;
  if (cost) facts.cost = cost;
  if (outcome === 'aborted') facts.error = GONE;
  else if (outcome === 'failed') facts.error = err === undefined ? ENDED_EARLY : errorOf(err);
}
