import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ADMIN_TOKEN, createTestApp, seedAccount, type TestApp } from './harness.ts';
import { startGateway, stopAllGateways, type GatewayProcess } from './support/gateway-process.ts';
import { startReceiver, waitUntil, type Receiver } from './support/receiver.ts';
import { tracingWanted } from '../src/lib/tracing.ts';

// The official OpenTelemetry exporter (OTLP/HTTP, JSON) of a real gateway process sends its spans to
// a local receiver: a server span per request, a child span per upstream text call with the GenAI
// attributes, and nothing secret in any of them.

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
}

const PROMPT = 'the words xyzzy-plugh are the prompt';
let t: TestApp;
let receiver: Receiver;
let gateway: GatewayProcess;
let account: Awaited<ReturnType<typeof seedAccount>>;

const spans = (): OtlpSpan[] =>
  receiver.received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => (JSON.parse(r.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans)
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
const attrs = (span: OtlpSpan) =>
  Object.fromEntries(span.attributes.map((a) => [a.key, a.value.stringValue ?? (a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.boolValue)]));

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp();
  account = await seedAccount(t.ctx, 10);
  gateway = await startGateway({
    ...t.database.env,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ADMIN_TOKEN,
    WORKERS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: 'gateway-under-test',
  });
}, 90_000);

afterAll(async () => {
  await stopAllGateways();
  await receiver?.close();
  await t?.close();
});

describe('OpenTelemetry traces', () => {
  it('a text call: the server span, its upstream call as a child span with the GenAI attributes, no secret or prompt', async () => {
    const res = await request(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.key },
      body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(res.statusCode).toBe(200);
    const answer = (await res.body.json()) as { usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number } };
    await waitUntil('the spans of the call', () => spans().some((s) => s.name === 'POST /v1/messages') && spans().some((s) => s.name.startsWith('chat ')));

    const server = spans().find((s) => s.name === 'POST /v1/messages')!;
    const upstream = spans().find((s) => s.name.startsWith('chat '))!;
    expect(server.kind).toBe(2); // SERVER
    expect(upstream.kind).toBe(3); // CLIENT
    expect(upstream.traceId).toBe(server.traceId);
    expect(upstream.parentSpanId).toBe(server.spanId);
    expect(attrs(server)).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/messages', 'url.path': '/v1/messages', 'http.response.status_code': 200 });
    const used = answer.usage.input_tokens + (answer.usage.cache_read_input_tokens ?? 0) + (answer.usage.cache_creation_input_tokens ?? 0);
    expect(attrs(upstream)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'simulator',
      'gen_ai.request.model': 'chatgen-4-haiku',
      'gen_ai.request.max_tokens': 32,
      'gen_ai.usage.input_tokens': used,
      'gen_ai.usage.output_tokens': answer.usage.output_tokens,
    });
    expect(answer.usage.output_tokens).toBeGreaterThan(0);

    const exported = receiver.received.map((r) => r.body).join('\n');
    expect(exported).toContain('gateway-under-test');
    expect(exported).not.toContain(account.key);
    expect(exported).not.toContain('xyzzy');
  });

  it('a streamed call and a refused one: the stream span ends with its usage; a 402 has its server span and no upstream span', async () => {
    const before = spans().length;
    const streamed = await request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.key}` },
      body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 16, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(streamed.statusCode).toBe(200);
    await streamed.body.text();
    const poor = await seedAccount(t.ctx, 0);
    const refused = await request(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': poor.key },
      body: JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.statusCode).toBe(402);
    await refused.body.dump();
    await waitUntil('the later spans', () => {
      const late = spans().slice(before);
      return late.some((s) => s.name === 'POST /v1/chat/completions') && late.some((s) => s.name.startsWith('chat ')) && late.some((s) => s.name === 'POST /v1/messages');
    });
    const late = spans().slice(before);
    const chat = late.find((s) => s.name === 'POST /v1/chat/completions')!;
    const stream = late.find((s) => s.name.startsWith('chat '))!;
    expect(stream.parentSpanId).toBe(chat.spanId);
    expect(Number(attrs(stream)['gen_ai.usage.output_tokens'])).toBeGreaterThan(0);
    const refusal = late.find((s) => s.name === 'POST /v1/messages')!;
    expect(attrs(refusal)['http.response.status_code']).toBe(402);
    expect(late.filter((s) => s.parentSpanId === refusal.spanId)).toEqual([]);
  });

  it('is off unless the standard variables ask for it', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });
});
