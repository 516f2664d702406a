import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { httpSeries } from './http-series.ts';

/** HTTP metrics of the server plus the registry other domains add their gauges to. */
export interface HttpMetrics {
  /** Private prom-client registry: `new Gauge({ name, help, registers: [metrics.registry], collect() {…} })`. */
  readonly registry: Registry;
  /** Start timing a request; call the result once it finished (route = pattern, never the raw URL). */
  start(): (method: string, route: string, status: number) => void;
  /**
   * A gauge read at scrape time, one series per key of `read()`'s result, e.g.
   * `gauge('svc_tasks', 'Tasks by status', 'status', () => board.countsByStatus())`.
   */
  gauge(name: string, help: string, label: string, read: () => Record<string, number>): void;
}

/** A fresh registry with Node's default metrics and the two HTTP series. */
export function createMetrics(opts: { prefix?: string; defaults?: boolean } = {}): HttpMetrics {
  const registry = new Registry();
  if (opts.defaults ?? true) collectDefaultMetrics({ register: registry, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
  const record = httpSeries(registry);
  return {
    registry,
    start() {
      const t0 = process.hrtime.bigint();
      return (method, route, status) => record(method, route, status, Number(process.hrtime.bigint() - t0) / 1e9);
    },
    gauge(name, help, label, read) {
      new Gauge({
        name, help, labelNames: [label], registers: [registry],
        collect() {
          this.reset();
          for (const [key, value] of Object.entries(read())) this.set({ [label]: key }, value);
        },
      });
    },
  };
}
