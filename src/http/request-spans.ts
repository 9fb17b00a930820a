import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracer } from '../lib/tracing.ts';

// A server span per request while traces are on (lib/tracing.ts): the route, the method, the path
// without its query (a query may carry a key) and the status. A streamed answer's span ends when
// its connection is done with it, so a stream's span covers the whole stream.

declare module 'fastify' {
  interface FastifyRequest {
    span?: Span;
  }
}

export function addRequestSpans(app: FastifyInstance): void {
  const traces = tracer();
  if (!traces) return;
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = traces.startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': pathOf(request) },
    });
    request.span = span;
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    done();
  });
}

const pathOf = (request: FastifyRequest) => {
  const query = request.url.indexOf('?');
  return query < 0 ? request.url : request.url.slice(0, query);
};
