import { open } from 'node:fs/promises';
import { Type, type Static } from '../lib/typebox.ts';
import type { SddLayout } from '../store/layout.ts';
import type { RecordStore } from '../store/types.ts';

/** How a run ended: task closed, task failed (or blocked, or gates failed), agent killed, task handed back. */
export const RUN_OUTCOMES = ['succeeded', 'failed', 'killed', 'released'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** One line of `.sdd/metrics/runs.jsonl`: a finished agent run. */
export interface RunRecord {
  session_id: string;
  task_id: string;
  /** The task's tenant (records written before tenants were recorded count as 'default'). */
  tenant?: string;
  adapter: string | null;
  model: string | null;
  outcome: RunOutcome;
  seconds: number;
  /** null when no gates ran for the run (it never reached done). */
  gates_passed: boolean | null;
  cost_usd: number | null;
  finished_at: string;
}

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/** Agent metrics of one (adapter, model) pair (DECISIONS.md Agents). */
export const AgentMetrics = Type.Object({
  adapter: Type.String(), model: Type.String(), tasks: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer(),
  success_rate: Type.Number(), avg_completion_s: NullableNumber, cost_per_task_usd: NullableNumber, gate_pass_rate: NullableNumber,
}, { $id: 'AgentMetrics' });
export type AgentMetrics = Static<typeof AgentMetrics>;

/** Append one run record (committed into refs/sdd/state with the rest of `.sdd/metrics`). */
export function appendRun(deps: { store: RecordStore; layout: SddLayout }, run: RunRecord): Promise<void> {
  return deps.store.appendJsonl(deps.layout.metricsRuns, run, `run ${run.session_id} ${run.outcome}`);
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** One record per (adapter, model), sorted by adapter then model; runs without an adapter count as "unknown" (pure). */
export function compareRuns(runs: readonly RunRecord[]): AgentMetrics[] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of runs) {
    const key = JSON.stringify([r.adapter || 'unknown', r.model || '']);
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  const out: AgentMetrics[] = [];
  for (const [key, g] of groups) {
    const [adapter, model] = JSON.parse(key) as [string, string];
    const ok = g.filter((r) => r.outcome === 'succeeded');
    const costs = g.map((r) => r.cost_usd).filter((c): c is number => typeof c === 'number');
    const gated = g.filter((r) => r.gates_passed !== null);
    out.push({
      adapter, model, tasks: g.length, succeeded: ok.length, failed: g.length - ok.length,
      success_rate: round(ok.length / g.length, 4),
      avg_completion_s: ok.length ? round(ok.reduce((s, r) => s + r.seconds, 0) / ok.length, 3) : null,
      cost_per_task_usd: costs.length ? round(costs.reduce((s, c) => s + c, 0) / g.length, 6) : null,
      gate_pass_rate: gated.length ? round(gated.filter((r) => r.gates_passed).length / gated.length, 4) : null,
    });
  }
  return out.sort((a, b) => (a.adapter === b.adapter ? cmp(a.model, b.model) : cmp(a.adapter, b.adapter)));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The last `"total_cost_usd": <number>` an agent printed (Claude's stream-json result line), or null (pure). */
export function costFromLogText(text: string): number | null {
  let last: number | null = null;
  for (const m of text.matchAll(/"total_cost_usd"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/g)) last = Number(m[1]);
  return last !== null && Number.isFinite(last) && last >= 0 ? last : null;
}

/** The cost reported in the last 64 KiB of a session's log, or null. */
export async function costFromLog(logFile: string): Promise<number | null> {
  try {
    const fh = await open(logFile, 'r');
    try {
      const { size } = await fh.stat();
      const len = Math.min(size, 64 * 1024);
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, size - len);
      return costFromLogText(buf.toString('utf8'));
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
}
