import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { GateReport, MergeOutcome, RunRecord, SessionRecord } from './types.ts';

/** What the scrape-time gauges read. */
export interface MetricsReads {
  /** Tasks per status and role, and claimable tasks per role (the `Tasks` tally). */
  tally(): { byStatusRole: ReadonlyMap<string, ReadonlyMap<string, number>>; readyByRole: Map<string, number> };
  sessions(): SessionRecord[];
  /** SSE clients connected to /events now. */
  eventClients(): number;
}

/** Counters and histograms the server feeds as things happen. */
export interface Recorder {
  taskCreated(): void;
  transition(from: string, to: string): void;
  claimWait(seconds: number): void;
  runEnded(run: RunRecord): void;
  gates(report: GateReport): void;
  merge(outcome: MergeOutcome | 'manual'): void;
  event(name: string): void;
  cacheLookup(hit: boolean): void;
}

const RUN_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];
const CLAIM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400];

// A gauge whose series are recomputed at every scrape.
function scraped<L extends string>(registry: Registry, name: string, help: string, labelNames: L[], read: () => Iterable<[Record<L, string>, number]>): void {
  new Gauge({
    name, help, labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of read()) this.set(labels, v);
    },
  });
}

// Count items by a key built from each.
function countBy<T>(items: Iterable<T>, key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of items) { const k = key(t); m.set(k, (m.get(k) ?? 0) + 1); }
  return m;
}

/**
 * Register the operator's metrics (docs/observability.md lists them) on the server's registry and
 * return the recorder the feed and the orchestrator's observer call. Webhook and cluster counters are
 * registered by their own domains on the same registry.
 */
export function registerObserveMetrics(registry: Registry, reads: MetricsReads, version: string): Recorder {
  // Both read counts the board keeps as tasks change: a pass over a 100k board cost ~0.15 s of the event loop
  // per scrape (and the bench's settle polls /metrics every 20 ms).
  scraped(registry, 'svc_tasks', 'Tasks on the board by status and role', ['status', 'role'], function* () {
    for (const [status, roles] of reads.tally().byStatusRole) for (const [role, n] of roles) if (n > 0) yield [{ status, role }, n];
  });
  // Zero series for every role on the board and every adapter seen, so a panel shows 0 rather than nothing.
  const adapters = new Set<string>();
  scraped(registry, 'svc_task_queue_depth', 'Open tasks whose dependencies are satisfied (claimable now), by role', ['role'], () => {
    const { byStatusRole, readyByRole } = reads.tally();
    for (const roles of byStatusRole.values()) for (const [role, n] of roles) if (n > 0 && !readyByRole.has(role)) readyByRole.set(role, 0);
    return [...readyByRole].map(([role, n]): [Record<'role', string>, number] => [{ role }, n]);
  });
  scraped(registry, 'svc_agents_running', 'Agent processes starting or running, by adapter', ['adapter'], () => {
    const sessions = reads.sessions();
    for (const s of sessions) adapters.add(s.adapter ?? 'unknown');
    const running = countBy(sessions.filter((s) => s.status === 'starting' || s.status === 'running'), (s) => s.adapter ?? 'unknown');
    return [...adapters].map((adapter) => [{ adapter }, running.get(adapter) ?? 0]);
  });
  scraped(registry, 'svc_events_clients', 'Clients connected to the /events stream', [], () => [[{}, reads.eventClients()]]);
  scraped(registry, 'svc_build_info', 'Always 1; the version label names the running svc', ['version'], () => [[{ version }, 1]]);

  const created = new Counter({ name: 'svc_tasks_created_total', help: 'Tasks created', registers: [registry] });
  const transitions = new Counter({ name: 'svc_task_transitions_total', help: 'Task status changes, by previous and new status', labelNames: ['from', 'to'], registers: [registry] });
  const claimWait = new Histogram({ name: 'svc_task_claim_latency_seconds', help: 'Time a task waited open before it was claimed', buckets: CLAIM_BUCKETS, registers: [registry] });
  const runs = new Counter({ name: 'svc_agent_runs_total', help: 'Finished agent runs by adapter, model and outcome (succeeded, failed, killed, released)', labelNames: ['adapter', 'model', 'outcome'], registers: [registry] });
  const runSeconds = new Histogram({ name: 'svc_agent_run_duration_seconds', help: 'Wall time of finished agent runs', labelNames: ['adapter', 'model', 'outcome'], buckets: RUN_BUCKETS, registers: [registry] });
  const runCost = new Counter({ name: 'svc_agent_run_cost_usd_total', help: 'Cost reported by agents in their logs, in US dollars', labelNames: ['adapter', 'model'], registers: [registry] });
  const gateRuns = new Counter({ name: 'svc_gate_runs_total', help: 'Gate runs on done tasks, by overall result (pass, fail)', labelNames: ['result'], registers: [registry] });
  const gateChecks = new Counter({ name: 'svc_gate_checks_total', help: 'Single gates run, by gate name and status (pass, fail, timeout, error)', labelNames: ['gate', 'status'], registers: [registry] });
  const merges = new Counter({ name: 'svc_merges_total', help: 'Merges of agent branches into the base, by outcome (merged, already, deferred, conflict; manual: closed after a person merged)', labelNames: ['outcome'], registers: [registry] });
  const events = new Counter({ name: 'svc_events_total', help: 'Board changes published on /events, by event', labelNames: ['event'], registers: [registry] });
  const cache = new Counter({ name: 'svc_read_cache_requests_total', help: 'Reads of /status, /dashboard/data and /slo answered from the snapshot cache (hit) or computed (miss)', labelNames: ['result'], registers: [registry] });
  // Zero series, so rates and ratios exist before the first event.
  for (const result of ['pass', 'fail']) gateRuns.inc({ result }, 0);
  for (const result of ['hit', 'miss']) cache.inc({ result }, 0);

  return {
    taskCreated: () => created.inc(),
    transition: (from, to) => transitions.inc({ from, to }),
    claimWait: (s) => claimWait.observe(s),
    runEnded(run) {
      const labels = { adapter: run.adapter ?? 'unknown', model: run.model ?? '', outcome: run.outcome };
      runs.inc(labels);
      runSeconds.observe(labels, run.seconds);
      adapters.add(labels.adapter);
      runCost.inc({ adapter: labels.adapter, model: labels.model }, typeof run.cost_usd === 'number' && run.cost_usd > 0 ? run.cost_usd : 0);
    },
    gates(report) {
      gateRuns.inc({ result: report.overall_pass ? 'pass' : 'fail' });
      for (const r of report.results) gateChecks.inc({ gate: r.name, status: r.status });
    },
    merge: (outcome) => merges.inc({ outcome }),
    event: (name) => events.inc({ event: name }),
    cacheLookup: (hit) => cache.inc({ result: hit ? 'hit' : 'miss' }),
  };
}
