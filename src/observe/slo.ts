import type { RunRecord } from './types.ts';

/** SLO targets (config `observe.slo`). */
export interface SloTargets {
  /** Share of finished tasks that succeeded (done or closed, against failed). */
  task_success: number;
  /** Share of merges of gated work that landed. */
  merge_success: number;
  /** Share of gate runs that passed. */
  gate_pass: number;
  /** 95th percentile of successful agent runs, in seconds (at most). */
  run_p95_s: number;
}

export interface Slo {
  name: keyof SloTargets;
  description: string;
  target: number;
  /** null when there is nothing to measure yet. */
  current: number | null;
  samples: number;
  status: 'met' | 'breached' | 'no_data';
  met: boolean;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** The p-th percentile (0..1) of `values` by nearest rank, or null when empty (pure). */
export function percentile(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function ratio(name: keyof SloTargets, description: string, target: number, good: number, total: number): Slo {
  const current = total ? round(good / total) : null;
  const met = current === null || current >= target;
  return { name, description, target, current, samples: total, status: current === null ? 'no_data' : met ? 'met' : 'breached', met };
}

/** GET /slo: each SLO with target, current and met, and the error budget of task success (pure). */
export function buildSlo(input: { counts: Record<string, number>; runs: readonly RunRecord[] }, t: SloTargets) {
  const ok = (input.counts.done ?? 0) + (input.counts.closed ?? 0);
  const failed = input.counts.failed ?? 0;
  const gated = input.runs.filter((r) => r.gates_passed !== null);
  const mergeTries = gated.filter((r) => r.gates_passed === true);
  const durations = input.runs.filter((r) => r.outcome === 'succeeded').map((r) => r.seconds);
  const p95 = percentile(durations, 0.95);
  const slos: Slo[] = [
    ratio('task_success', 'Finished tasks that succeeded (done or closed) rather than failed', t.task_success, ok, ok + failed),
    ratio('merge_success', 'Agent runs whose work passed its gates and was merged (not a merge conflict)', t.merge_success, mergeTries.filter((r) => r.outcome === 'succeeded').length, mergeTries.length),
    ratio('gate_pass', 'Gate runs that passed', t.gate_pass, gated.filter((r) => r.gates_passed).length, gated.length),
    {
      name: 'run_p95_s', description: '95th percentile duration of successful agent runs, in seconds (at most the target)',
      target: t.run_p95_s, current: p95, samples: durations.length,
      status: p95 === null ? 'no_data' : p95 <= t.run_p95_s ? 'met' : 'breached', met: p95 === null || p95 <= t.run_p95_s,
    },
  ];
  return { slos, error_budget: errorBudget(ok + failed, failed, t.task_success) };
}

/** Error budget of task success: failures allowed by the target, how many are left, and the burn rate (pure). */
export function errorBudget(total: number, failed: number, target: number) {
  // Rounded, so 10 % of 20 tasks allows 2 failures, not 1.9999999999999996.
  const allowed = Math.round((1 - target) * total * 1e6) / 1e6;
  const remaining = allowed - failed;
  const burn = total && target < 1 ? failed / total / (1 - target) : 0;
  const fraction = allowed > 0 ? Math.max(0, remaining / allowed) : failed > 0 ? 0 : 1;
  const depleted = total > 0 && remaining < 0;
  return {
    total_tasks: total, failed_tasks: failed, budget_total: round(allowed), budget_remaining: round(remaining),
    budget_fraction: round(fraction), burn_rate: round(burn), is_depleted: depleted,
    status: depleted ? 'exhausted' : total > 0 && fraction < 0.25 ? 'warning' : 'healthy',
  };
}
