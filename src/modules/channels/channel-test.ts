import type { AppContext } from '../../context.ts';
import { upstreamModelName, type Channel } from '../../core/channel.ts';
import { notFound } from '../../core/errors.ts';
import type { ChannelTypeEntry } from '../../providers/channel-type.ts';
import { TEXT_MODELS } from '../../core/catalog/models.ts';
import { knownType } from './channel-options.ts';
import { getChannel } from './channels.repo.ts';

// "Test this channel" in the console: one real, tiny call through the channel's own provider, so an
// operator sees a wrong URL, secret or model mapping before callers do. Nothing is billed. What the
// call is comes from the channel type's registry entry.

export interface ChannelTestResult {
  ok: boolean;
  latency_ms: number;
  detail: string;
}

/** The text model to ask: one of ours it serves, or for a text-only type any name it serves (an upstream's own). */
function textModelOf(channel: Channel, entry: ChannelTypeEntry): string | undefined {
  const models = [...channel.models];
  if (models.includes('*')) return TEXT_MODELS[0];
  const ours = models.find((m) => TEXT_MODELS.includes(m));
  return ours ?? (entry.serves.every((s) => s === 'text') ? models[0] : undefined);
}

function probe(ctx: AppContext, channel: Channel, entry: ChannelTypeEntry) {
  const timeoutMs = ctx.config.upstreamTimeoutMs;
  return entry.test({
    channel,
    timeoutMs,
    async text() {
      const model = textModelOf(channel, entry);
      const provider = ctx.textProviderFor(channel);
      if (!model || !provider) return undefined;
      const result = await provider.generate(
        { model: upstreamModelName(channel, model), maxTokens: 8, messages: [{ role: 'user', parts: [{ type: 'text', text: 'ping' }] }] },
        AbortSignal.timeout(timeoutMs),
      );
      return `${model} answered with ${result.usage.output} output tokens`;
    },
  });
}

export async function testChannel(ctx: AppContext, id: string): Promise<ChannelTestResult> {
  const channel = await getChannel(ctx.db, id);
  if (!channel) throw notFound(`No channel ${id}`);
  const started = performance.now();
  try {
    const detail = await probe(ctx, channel, knownType(channel.type));
    return { ok: true, latency_ms: Math.round(performance.now() - started), detail };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), detail: err instanceof Error ? err.message : String(err) };
  }
}
