import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteSeries {
  method: string;
  route: string;
  /** Requests by status code. */
  statuses: Map<number, number>;
  /** Not cumulative: observations per bucket, the last slot counting those above every bound. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * Request counts and latencies per route, counted with plain numbers on every request and turned
 * into Prometheus series only when scraped. prom-client's labelled counter and histogram cost ~10 µs
 * per request in a text call's profile (label hashing, bucket search, objects); this costs well
 * under one. The exposition is the same as before: `gateway_http_requests_total{method,route,status}`
 * and the histogram `gateway_http_request_duration_seconds{method,route}`.
 */
class HttpSeries {
  private series = new Map<string, RouteSeries>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const id = `${method} ${route}`;
    let entry = this.series.get(id);
    if (!entry) {
      entry = { method, route, statuses: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      this.series.set(id, entry);
    }
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    entry.buckets[bucket]! += 1;
    entry.sum += seconds;
    entry.count += 1;
  }

  requests(): Sample[] {
    const values: Sample[] = [];
    for (const s of this.series.values()) {
      for (const [status, value] of s.statuses) values.push({ labels: { method: s.method, route: s.route, status: String(status) }, value });
    }
    return values;
  }

  latency(name: string): Sample[] {
    const values: Sample[] = [];
    for (const s of this.series.values()) {
      const labels = { method: s.method, route: s.route };
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
      });
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${name}_sum`, labels, value: s.sum });
      values.push({ metricName: `${name}_count`, labels, value: s.count });
    }
    return values;
  }
}

/** A series computed at scrape time, registered like any prom-client metric. */
function scrapedMetric(name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): Metric {
  const metric = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }), reset() {} };
  return metric as unknown as Metric;
}

// One registry per context, so several apps in one test process never share counters.
export class Metrics {
  readonly registry = new Registry();
  private readonly http = new HttpSeries();

  readonly webhooks = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Callback attempts by outcome: delivered, retried, dropped (retries used up), failed (4xx), refused (address rules)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    const latency = 'gateway_http_request_duration_seconds';
    this.registry.registerMetric(scrapedMetric('gateway_http_requests_total', 'HTTP requests by route and status', 'counter', () => this.http.requests()));
    this.registry.registerMetric(scrapedMetric(latency, 'HTTP request latency by route', 'histogram', () => this.http.latency(latency)));
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.http.observe(method, route, status, seconds);
  }

  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
  }
}
