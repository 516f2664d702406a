import type { Progress } from './board-source.ts';
import { live, totalCost, type BoardView } from './status.ts';
import type { SessionRecord, Task } from './types.ts';

/** One task as the board and editor clients show it (also the data of task events). */
export function cardOf(t: Task, progress: Progress | undefined) {
  return {
    id: t.id, title: t.title, role: t.role, status: t.status, priority: t.priority, version: t.version,
    assigned_agent: t.assigned_agent, claimed_by_session: t.claimed_by_session, owned_files: t.owned_files,
    created_at: t.created_at, updated_at: t.updated_at, status_reason: t.status_reason,
    progress: progress?.percent ?? null, progress_message: progress?.message ?? null,
  };
}
export type Card = ReturnType<typeof cardOf>;

/** One agent session as /dashboard/data lists it. */
export function agentOf(s: SessionRecord, nowMs: number, tasks: (id: string) => Task | undefined, costOf: (id: string) => number) {
  const end = s.ended_at ? Date.parse(s.ended_at) : nowMs;
  const t = tasks(s.task_id);
  return {
    id: s.session_id, role: s.role, status: s.status, model: s.model, adapter: s.adapter,
    runtime_s: Math.max(0, Math.round((end - Date.parse(s.started_at)) / 100) / 10), pid: s.pid,
    task_ids: [s.task_id], tasks: [{ id: s.task_id, title: t?.title ?? s.task_title, status: t?.status ?? null }],
    cost_usd: costOf(s.task_id), trace_id: s.trace_id ?? null,
  };
}

/** Spending against the configured budget (observe.budget_usd; 0 = none): warn at warn_pct, stop at 100 % (pure). */
export function liveCosts(spent: number, budget: number, warnPct: number) {
  const pct = budget > 0 ? Math.round((spent / budget) * 10_000) / 100 : 0;
  return { spent_usd: spent, budget_usd: budget, percentage_used: pct, should_warn: budget > 0 && pct >= warnPct, should_stop: budget > 0 && pct >= 100 };
}

export interface Alert { level: 'info' | 'warning' | 'critical'; message: string; detail?: string }

/** What deserves attention on the board (pure). */
export function alertsOf(v: BoardView, costs: ReturnType<typeof liveCosts>, draining: boolean): Alert[] {
  const out: Alert[] = [];
  if (draining) out.push({ level: 'warning', message: 'Server is draining: no new claims or creations' });
  if (costs.should_stop) out.push({ level: 'critical', message: `Budget spent: $${costs.spent_usd} of $${costs.budget_usd}` });
  else if (costs.should_warn) out.push({ level: 'warning', message: `Budget ${costs.percentage_used}% used: $${costs.spent_usd} of $${costs.budget_usd}` });
  const failed = v.counts.failed ?? 0;
  if (failed) out.push({ level: 'warning', message: `${failed} failed task(s)` });
  const blocked = v.tasks.filter((t) => t.status === 'blocked');
  if (blocked.length) out.push({ level: 'info', message: `${blocked.length} blocked task(s) wait for a person`, detail: blocked.slice(0, 5).map((t) => `${t.id}: ${t.status_reason ?? 'blocked'}`).join('\n') });
  for (const s of v.sessions) if (s.stalled && live(s)) out.push({ level: 'warning', message: `Agent ${s.session_id} looks stalled`, detail: `task ${s.task_id}` });
  return out;
}

/** GET /dashboard/data (DECISIONS.md Observability and clients), plus `seq` to resume /events from (pure). */
export function buildDashboard(v: BoardView, o: { get: (id: string) => Task | undefined; budgetUsd: number; warnPct: number; draining: boolean; seq: number; ts: string; you: unknown }) {
  const spent = totalCost(v);
  const costs = liveCosts(spent, o.budgetUsd, o.warnPct);
  return {
    ts: o.ts,
    seq: o.seq,
    stats: { total: v.counts.total ?? v.tasks.length, open: v.counts.open ?? 0, claimed: v.counts.claimed ?? 0, in_progress: v.counts.in_progress ?? 0, done: v.counts.done ?? 0, failed: v.counts.failed ?? 0, agents: v.sessions.filter(live).length, cost_usd: spent },
    tasks: v.tasks.map((t) => cardOf(t, v.progressOf(t.id))),
    agents: v.sessions.map((s) => agentOf(s, v.nowMs, o.get, v.costOf)),
    live_costs: costs,
    alerts: alertsOf(v, costs, o.draining),
    you: o.you,
  };
}
