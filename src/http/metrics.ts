/** Prometheus metrics: request counts and latencies by route and status. One registry per app instance. */
import { Counter, Histogram, Registry } from 'prom-client';

export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface HttpMetrics {
  registry: Registry;
  observe(method: string, route: string, statusCode: number, durationMs: number): void;
}

/** Registers in `registry` (the process's, src/metrics.ts), or a registry of its own. */
export function createHttpMetrics(registry: Registry = new Registry()): HttpMetrics {
  const labelNames = ['method', 'route', 'status_code'] as const;
  // Two apps built on one Deps (one process's registry) share these metrics rather than register them twice.
  const existing = registry.getSingleMetric('mkoba_http_requests_total');
  const existingLatency = registry.getSingleMetric('mkoba_http_request_duration_seconds');
  if (existing instanceof Counter && existingLatency instanceof Histogram) {
    return { registry, observe: observer(existing, existingLatency) };
  }
  const requests = new Counter({
    name: 'mkoba_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'mkoba_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route pattern and status code.',
    labelNames,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  });
  return { registry, observe: observer(requests, latency) };
}

function observer(requests: Counter<string>, latency: Histogram<string>): HttpMetrics['observe'] {
  return (method, route, statusCode, durationMs) => {
    const labels = { method, route, status_code: String(statusCode) };
    requests.inc(labels);
    latency.observe(labels, durationMs / 1000);
  };
}
