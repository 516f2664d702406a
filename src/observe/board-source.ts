// The one place observe calls the tasks domain (its `Tasks` interface), the orchestrator and the store.
import type { RunRecord, SessionRecord, Task } from './types.ts';
import type { Route } from '../lib/route.ts';
import type { SddLayout } from '../store/layout.ts';
import type { Tasks } from '../tasks/index.ts';
import type { RecordStore } from '../store/types.ts';
import type { AuditEntry } from './audit.ts';

/** The latest progress report of a task's run. */
export interface Progress {
  percent: number | null;
  message: string | null;
  ts: string;
}

/** Everything observe reads from the rest of the server, and the few things it writes. */
export interface BoardSource {
  /** Every task, in creation order. */
  all(): readonly Task[];
  /** Every task in no particular order (a start's pass: no sort). */
  each(): Iterable<Task>;
  /** Every task of one tenant, in creation order. */
  ofTenant(tenant: string): readonly Task[];
  get(id: string): Task | undefined;
  /** The task if the tenant may see it, else the contract's 404. */
  visible(id: string, tenant: string): Task;
  /** Counts per status plus total (one tenant, or all). */
  counts(tenant?: string): Record<string, number>;
  /** Tasks per status and role, and claimable tasks per role, kept by the board (no pass over it). */
  tally(): ReturnType<Tasks['tally']>;
  /** Called after every task change; returns the unsubscribe function. */
  onChange(fn: (t: Task) => void): () => void;
  /** The latest progress entry of the task's current run, or null. */
  latestProgress(id: string, tenant: string): Promise<Progress | null>;
  /** Records of the agent sessions the orchestrator holds. */
  sessions(): SessionRecord[];
  /** Every finished agent run (`.sdd/metrics/runs.jsonl`). */
  readRuns(): Promise<RunRecord[]>;
  draining(): boolean;
  maxAgents(): number;
  /** How agents are contained (`agents.sandbox`): `none` means they can reach everything the server's user can. */
  sandbox(): { mode: string; reason: string };
  /** Append an audit record (exports, SBOM writes). */
  audit(entry: AuditEntry): Promise<void>;
  /** Write a JSON file under `.sdd` (committed into refs/sdd/state). */
  writeJson(abs: string, value: unknown, note: string): Promise<void>;
  readonly layout: SddLayout;
}

export interface BoardSourceDeps {
  tasks: Tasks;
  store: RecordStore;
  layout: SddLayout;
  audit: { append(entry: AuditEntry): Promise<unknown> };
  /** `orchestrator.max_agents` now (the config object reloads update). */
  maxAgents: () => number;
  /** The orchestrator's sessions (none when it is off). */
  sessions: () => SessionRecord[];
  /** The orchestrator's sandbox decision. */
  sandbox: () => { mode: string; reason: string };
}

/** The board source of a running server. */
export function createBoardSource(d: BoardSourceDeps): BoardSource {
  const { tasks } = d;
  return {
    layout: d.layout,
    all: () => tasks.list(),
    each: () => tasks.each(),
    ofTenant: (tenant) => tasks.list({ tenant }),
    get: (id) => tasks.get(id),
    visible: (id, tenant) => tasks.visible(id, tenant),
    counts: (tenant) => tasks.counts(tenant) as unknown as Record<string, number>,
    tally: () => tasks.tally(),
    onChange: (fn) => tasks.onChange(fn),
    async latestProgress(id, tenant) {
      const p = await tasks.progress(id, { actor: 'svc', tenant }).catch(() => null);
      const last = p?.entries[p.entries.length - 1];
      return last ? { percent: last.percent, message: last.message, ts: last.ts } : null;
    },
    sessions: d.sessions,
    readRuns: () => d.store.readJsonl<RunRecord>(d.layout.metricsRuns),
    draining: () => tasks.draining,
    maxAgents: d.maxAgents,
    sandbox: () => { const s = d.sandbox(); return { mode: s.mode, reason: s.reason }; },
    audit: async (entry) => { await d.audit.append(entry); },
    writeJson: (abs, value, note) => d.store.writeJson(abs, value, note),
  };
}

/**
 * The task routes with `POST /tasks/{id}/progress` tapped: after a report is stored, `fn` hears it
 * (the board shows progress live; a progress report is not a change of the task record).
 */
export function tapProgress(routes: Route[], fn: (taskId: string, tenant: string, p: Progress) => void, now: () => string): Route[] {
  return routes.map((r) => {
    if (r.operationId !== 'report_progress') return r;
    return {
      ...r,
      handler: async (ctx) => {
        const out = (await r.handler(ctx)) as Task;
        const body = (ctx.body ?? {}) as { percent?: number; message?: string };
        if (out && typeof out === 'object' && typeof out.id === 'string') {
          fn(out.id, out.tenant, { percent: body.percent ?? null, message: body.message ?? null, ts: now() });
        }
        return out;
      },
    };
  });
}
