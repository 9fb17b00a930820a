import { request } from 'undici';
import type { AppContext } from '../../context.ts';
import type { Channel } from '../../db/types.ts';
import { notFound } from '../../http/errors.ts';
import { TEXT_MODELS } from '../catalog/models.ts';
import { getChannel } from './channels.repo.ts';
import { upstreamModel } from './channels.service.ts';

// "Test this channel" in the console: one real, tiny call through the channel's own provider, so an
// operator sees a wrong URL, secret or model mapping before callers do. Nothing is billed.

export interface ChannelTestResult {
  ok: boolean;
  latency_ms: number;
  detail: string;
}

async function probe(ctx: AppContext, channel: Channel): Promise<string> {
  const models = JSON.parse(channel.models) as string[];
  const textModel = models.includes('*') ? TEXT_MODELS[0] : models.find((m) => TEXT_MODELS.includes(m)) ?? (channel.type === 'simulator' ? undefined : models[0]);
  const provider = ctx.textProviderFor(channel);
  if (textModel && provider) {
    const signal = AbortSignal.timeout(ctx.config.upstreamTimeoutMs);
    const result = await provider.generate(
      { model: upstreamModel(channel, textModel), maxTokens: 8, messages: [{ role: 'user', parts: [{ type: 'text', text: 'ping' }] }] },
      signal,
    );
    return `${textModel} answered with ${result.usage.outputTokens} output tokens`;
  }
  if (channel.type === 'simulator') return 'the built-in simulator is always available';
  // A relay serving media only: the other gateway's readiness check.
  const res = await request(new URL('/readyz', channel.base_url!), { headersTimeout: ctx.config.upstreamTimeoutMs });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`/readyz answered ${res.statusCode}`);
  return 'the upstream gateway is ready';
}

export async function testChannel(ctx: AppContext, id: string): Promise<ChannelTestResult> {
  const channel = await getChannel(ctx.db, id);
  if (!channel) throw notFound(`No channel ${id}`);
  const started = performance.now();
  try {
    const detail = await probe(ctx, channel);
    return { ok: true, latency_ms: Math.round(performance.now() - started), detail };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), detail: err instanceof Error ? err.message : String(err) };
  }
}
