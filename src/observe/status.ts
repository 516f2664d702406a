import type { Progress } from './board-source.ts';
import type { SessionRecord, Task } from './types.ts';

/** Task states in board order (the status keys of /status and the board's columns). */
export const STATUSES = ['open', 'claimed', 'in_progress', 'waiting_for_subtasks', 'blocked', 'done', 'closed', 'failed', 'refused', 'cancelled'] as const;

/** What the status, dashboard and SLO builders read: one tenant's board at one moment. */
export interface BoardView {
  tasks: readonly Task[];
  counts: Record<string, number>;
  /** Agent sessions of the tenant. */
  sessions: readonly SessionRecord[];
  costOf(taskId: string): number;
  progressOf(taskId: string): Progress | undefined;
  nowMs: number;
}

const round = (n: number, digits = 6) => Math.round(n * 10 ** digits) / 10 ** digits;
export const live = (s: Pick<SessionRecord, 'status'>) => s.status === 'starting' || s.status === 'running';

/** Total reported cost of the view's tasks. */
export function totalCost(v: Pick<BoardView, 'tasks' | 'costOf'>): number {
  let sum = 0;
  for (const t of v.tasks) sum += v.costOf(t.id);
  return round(sum);
}

/** Counts per status and cost, per role, sorted by role (pure). */
export function perRole(v: Pick<BoardView, 'tasks' | 'costOf'>): Record<string, number | string>[] {
  const roles = new Map<string, Record<string, number>>();
  for (const t of v.tasks) {
    let r = roles.get(t.role);
    if (!r) {
      r = Object.fromEntries([...STATUSES.map((s) => [s, 0]), ['total', 0], ['cost_usd', 0]]) as Record<string, number>;
      roles.set(t.role, r);
    }
    r[t.status] = (r[t.status] ?? 0) + 1;
    r.total! += 1;
    r.cost_usd! += v.costOf(t.id);
  }
  return [...roles.keys()].sort().map((role) => ({ role, ...roles.get(role)!, cost_usd: round(roles.get(role)!.cost_usd!) }));
}

/** GET /status (DECISIONS.md): counts per status and total at the top, agents, cost, per role, summary, cache metrics, uptime, version (pure). */
export function buildStatus(v: BoardView, extra: { version: string; uptimeS: number; maxAgents: number; draining: boolean; seq: number; cache: Record<string, number>; sandbox: { mode: string; reason: string } }) {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, v.counts[s] ?? 0])) as Record<(typeof STATUSES)[number], number>;
  const agents = v.sessions.filter(live).length;
  const cost = totalCost(v);
  return {
    ...counts,
    total: v.counts.total ?? v.tasks.length,
    agents,
    cost_usd: cost,
    per_role: perRole(v),
    summary: { total: v.counts.total ?? v.tasks.length, open: counts.open, claimed: counts.claimed, done: counts.done, failed: counts.failed, agents, cost_usd: cost, max_agents: extra.maxAgents },
    metrics: extra.cache,
    uptime_s: extra.uptimeS,
    version: extra.version,
    draining: extra.draining,
    // Said loudly wherever agents are described: without a sandbox they reach the server's secrets.
    agents_sandbox: extra.sandbox,
    seq: extra.seq,
  };
}
