import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// One registry per context, so several apps in one test process never share counters.
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly webhooks = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Callback attempts by outcome: delivered, retried, dropped (retries used up), failed (4xx), refused (address rules)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  // prom-client hashes label objects on every call; the labelled children are kept instead.
  private children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const id = `${method} ${status} ${route}`;
    let child = this.children.get(id);
    if (!child) {
      child = { count: this.requests.labels(method, route, String(status)), time: this.latency.labels(method, route) };
      this.children.set(id, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  }

  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
  }
}
