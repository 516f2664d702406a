// The two HTTP series (requests by method, route and status; duration by method and route) as plain
// counters per route, turned into prom-client's shape at scrape time. prom-client's own Counter and
// Histogram validate and hash the labels at every observation, a few µs per request on the hot path.
import type { Registry } from 'prom-client';

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series { method: string; route: string; statuses: Map<number, number>; buckets: number[]; sum: number; count: number }
type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/** Count one request of `route` (its pattern, never the raw URL) answered with `status` after `seconds`. */
export type RecordRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Register http_requests_total and http_request_duration_seconds on `registry`; the recorder feeds both. */
export function httpSeries(registry: Registry): RecordRequest {
  const all = new Map<string, Series>();
  const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) => ({
    name, help, type, aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
    reset: () => all.clear(),
  });
  registry.registerMetric(metric('http_requests_total', 'HTTP requests answered, by method, route pattern and status', 'counter', () =>
    [...all.values()].flatMap((s) => [...s.statuses].map(([status, value]) => ({ labels: { method: s.method, route: s.route, status }, value })))) as never);
  registry.registerMetric(metric('http_request_duration_seconds', 'HTTP request duration in seconds, by method and route pattern', 'histogram', () =>
    [...all.values()].flatMap((s) => {
      const labels = { method: s.method, route: s.route };
      let cumulative = 0;
      const buckets = BUCKETS.map((le, i) => ({ labels: { le, ...labels }, value: (cumulative += s.buckets[i]!), metricName: 'http_request_duration_seconds_bucket' }));
      return [...buckets, { labels: { le: '+Inf', ...labels }, value: s.count, metricName: 'http_request_duration_seconds_bucket' },
        { labels, value: s.sum, metricName: 'http_request_duration_seconds_sum' }, { labels, value: s.count, metricName: 'http_request_duration_seconds_count' }];
    })) as never);
  return (method, route, status, seconds) => {
    const key = `${method} ${route}`;
    let s = all.get(key);
    if (!s) all.set(key, (s = { method, route, statuses: new Map(), buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    const i = BUCKETS.findIndex((le) => seconds <= le);
    if (i >= 0) s.buckets[i]! += 1;
    s.sum += seconds;
    s.count += 1;
  };
}
