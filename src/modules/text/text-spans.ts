import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Channel } from '../../core/channel.ts';
import type { TextUsage } from '../../core/text/provider.ts';
import { tracer } from '../../lib/tracing.ts';
import type { TextCall } from './text-call.ts';

// A client span per upstream text call while traces are on, the child of its request's span, with
// the GenAI semantic conventions: the vendor, the model asked, the tokens by class. No prompt, answer,
// key or upstream error text goes into an attribute.

const VENDOR: Record<string, string> = {
  messages: 'anthropic',
  'chat-completions': 'openai',
  openai: 'openai',
  gemini: 'gcp.gemini',
  native: 'gcp.gemini',
  ark: 'byteplus',
};

export function upstreamSpan(call: TextCall, channel: Channel, upstreamModel: string): Span | undefined {
  const traces = tracer();
  if (!traces) return undefined;
  const vendor = VENDOR[channel.type] ?? channel.type;
  const parent = call.span ? trace.setSpan(context.active(), call.span) : context.active();
  return traces.startSpan(
    `chat ${upstreamModel}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': vendor,
        'gen_ai.provider.name': vendor,
        'gen_ai.request.model': upstreamModel,
        'gen_ai.request.max_tokens': call.request.maxTokens,
        'gateway.channel.id': channel.id,
        'gateway.channel.type': channel.type,
      },
    },
    parent,
  );
}

/** Ends the span with what the call used (prompt tokens of every class count as input), or how it failed. */
export function endUpstreamSpan(span: Span | undefined, usage: TextUsage | undefined, failure?: unknown): void {
  if (!span) return;
  if (usage) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': usage.input + usage.cache_read + usage.cache_write,
      'gen_ai.usage.output_tokens': usage.output,
      'gen_ai.usage.cache_read.input_tokens': usage.cache_read,
      'gen_ai.usage.cache_creation.input_tokens': usage.cache_write,
    });
  }
  if (failure !== undefined) {
    span.setAttribute('error.type', failure instanceof Error ? failure.constructor.name : 'error');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
