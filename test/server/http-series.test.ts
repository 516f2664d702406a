import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Counter, Histogram, Registry } from 'prom-client';
import { httpSeries } from '../../src/server/http-series.ts';

const s = suite('http series');

s('the plain counters scrape exactly as prom-client\'s Counter and Histogram would for the same requests', async () => {
  const mine = new Registry();
  const record = httpSeries(mine);
  const theirs = new Registry();
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers: [theirs] });
  const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'HTTP request duration in seconds, by method and route pattern', labelNames: ['method', 'route'], registers: [theirs],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });
  const seen: [string, string, number, number][] = [['GET', '/health', 200, 0.0004], ['GET', '/health', 200, 0.003], ['POST', '/tasks/:task_id/complete', 200, 0.02],
    ['POST', '/tasks/:task_id/complete', 409, 0.001], ['GET', 'unmatched', 404, 0.0001], ['GET', '/tasks', 200, 12], ['GET', '/tasks', 200, 0.5]];
  for (const [method, route, status, seconds] of seen) {
    record(method, route, status, seconds);
    requests.inc({ method, route, status: String(status) });
    duration.observe({ method, route }, seconds);
  }
  assert.is(await mine.metrics(), await theirs.metrics());
  mine.resetMetrics();
  assert.is(await mine.metrics(), '# HELP http_requests_total HTTP requests answered, by method, route pattern and status\n# TYPE http_requests_total counter\n\n# HELP http_request_duration_seconds HTTP request duration in seconds, by method and route pattern\n# TYPE http_request_duration_seconds histogram\n');
});

s.run();
