import type { ProviderSettings } from '../core/provider-settings.ts';
import { safeDispatcher } from '../lib/net/safe-dispatcher.ts';
import { systemResolver } from '../lib/net/target.ts';
import type { FetchLimits } from './openai/openai.references.ts';
import { DownloadSlots } from './reference-slots.ts';
import { ReferenceStore } from './reference-store.ts';

/**
 * The process's one set of reference-download rules: every channel type that downloads callers'
 * references shares its memory budget and its download slots.
 */
export function referenceLimits(config: Readonly<ProviderSettings>): FetchLimits {
  const rules = config.references;
  return {
    store: new ReferenceStore(rules.memoryBytes, rules.spoolDir),
    slots: new DownloadSlots(rules.downloads, rules.downloadsPerAccount),
    // Callers' URLs: fetched under the callback address rules; FETCH_ALLOW_PRIVATE lifts them.
    dispatcher: safeDispatcher(systemResolver, config.files.fetchAllowPrivate, config.upstreamTimeoutMs),
    allowPrivate: config.files.fetchAllowPrivate,
    timeoutMs: rules.timeoutMs,
    minBytesPerSecond: rules.minBytesPerSecond,
    windowMs: rules.windowMs,
    busyRetryMs: config.upstreamTasks.admissionRetryMs,
  };
}
