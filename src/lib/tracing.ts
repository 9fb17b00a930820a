import type { Span, Tracer } from '@opentelemetry/api';

// OpenTelemetry traces through the official SDK, exported over OTLP/HTTP, when the standard
// variables ask for them (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; the SDK
// reads the other OTEL_* variables itself). Otherwise no part of the SDK is loaded and a request pays
// one check of `tracer`.

let active: { tracer: Tracer; shutdown(): Promise<void> } | undefined;

/** The tracer while traces are on. */
export const tracer = (): Tracer | undefined => active?.tracer;

export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Registers the SDK's tracer provider, once per process, when the environment asks for traces. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (active || !tracingWanted(env)) return Boolean(active);
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, api] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/api'),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'generation-gateway' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  active = { tracer: api.trace.getTracer('generation-gateway'), shutdown: () => provider.shutdown() };
  return true;
}

/** Sends what is left and stops (at shutdown). */
export async function stopTracing(): Promise<void> {
  const stopping = active;
  active = undefined;
  await stopping?.shutdown();
}

export type { Span };
