import type { Registry } from 'prom-client';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import type { Git } from '../store/git-cli.ts';
import { byCreation } from '../tasks/index.ts';
import { BoardFeed } from './board-feed.ts';
import type { BoardSource, Progress } from './board-source.ts';
import type { ObserveCore } from './core.ts';
import { registerObserveMetrics } from './metrics.ts';
import { ReadCache } from './read-cache.ts';
import { observeRoutes } from './routes.ts';
import { boardRoutes } from './routes-board.ts';
import { eventRoutes, type OpenSse } from './routes-events.ts';
import { exportRoutes } from './routes-export.ts';
import { RunsLedger } from './runs-ledger.ts';
import type { AgentObserver, Task } from './types.ts';

export interface ObserveDeps {
  source: BoardSource;
  /** The server's metrics registry. */
  registry: Registry;
  clock: Clock;
  log: Logger;
  config: Config['observe'];
  version: string;
  openSse: OpenSse;
  git: Git;
  /** svc's own package folder (the SBOM's installed tree). */
  packageRoot: string;
  uuid: () => string;
}

/** Observability of one server: its routes, the orchestrator's observer and the progress tap. */
export interface Observability {
  routes: Route[];
  observer: AgentObserver;
  progressed(taskId: string, tenant: string, p: Progress): void;
  /** Load what the feed and costs start from (board, runs, progress of running tasks) and listen to task changes. */
  start(): Promise<void>;
  stop(): void;
}

// Progress of tasks being worked on is read once at start (bounded): the board shows it before the next report.
const SEED_PROGRESS = 500;

/** Build the change feed, metrics, caches and routes of observe. */
export function createObservability(d: ObserveDeps): Observability {
  const ledger = new RunsLedger();
  let feed: BoardFeed | undefined;
  const recorder = registerObserveMetrics(d.registry, { tally: () => d.source.tally(), sessions: () => d.source.sessions(), eventClients: () => feed?.clients ?? 0 }, d.version);
  feed = new BoardFeed({ ringSize: d.config.events.ring_size, base: d.clock.now() * 1000, recorder, get: (id) => d.source.get(id), log: d.log });
  const cache = new ReadCache((hit) => recorder.cacheLookup(hit));
  const core: ObserveCore = { source: d.source, feed, ledger, cache, clock: d.clock, config: d.config, version: d.version, startedMs: d.clock.now() };
  const f = feed;
  let off: (() => void) | null = null;
  return {
    routes: [
      ...observeRoutes(core),
      ...eventRoutes({ source: d.source, feed: f, openSse: d.openSse, pingMs: d.config.events.ping_ms, maxBufferBytes: d.config.events.max_buffer_bytes }),
      ...exportRoutes(core, { packageRoot: d.packageRoot, uuid: d.uuid }),
      ...boardRoutes({ source: d.source, git: d.git }),
    ],
    observer: {
      started: (rec) => f.agentStarted(rec),
      ended: (rec, run) => { if (run) ledger.add(run); f.agentExited(rec, run); },
      gates: (report) => recorder.gates(report),
      merged: (_id, outcome) => recorder.merge(outcome),
    },
    progressed: (id, _tenant, p) => f.progressed(id, p),
    async start() {
      // No list in creation order at start (its sort is 0.2 s of a 100k start): the first request that asks for one pays it.
      f.seed(d.source.each());
      off = d.source.onChange((t) => f.taskChanged(t));
      ledger.add(...(await d.source.readRuns().catch((err: Error) => { d.log.warn(`cannot read agent runs: ${err.message}`); return []; })));
      const working: Task[] = [];
      for (const t of d.source.each()) if (t.status === 'in_progress') working.push(t);
      for (const t of working.sort(byCreation).slice(-SEED_PROGRESS)) {
        const p = await d.source.latestProgress(t.id, t.tenant);
        if (p && !f.progressOf(t.id)) f.setProgress(t.id, p);
      }
    },
    stop() { off?.(); off = null; },
  };
}
