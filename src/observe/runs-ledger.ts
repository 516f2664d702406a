import type { RunRecord } from './types.ts';

/** Finished agent runs in memory (loaded once from metrics/runs.jsonl, then told of each new one): costs per task. */
export class RunsLedger {
  private runs: RunRecord[] = [];
  private costs = new Map<string, number>();

  /** Add runs (at start: the whole file; later: each run as it ends). */
  add(...runs: RunRecord[]): void {
    for (const r of runs) {
      this.runs.push(r);
      if (typeof r.cost_usd === 'number' && Number.isFinite(r.cost_usd)) this.costs.set(r.task_id, (this.costs.get(r.task_id) ?? 0) + r.cost_usd);
    }
  }

  /** Every run, oldest first. */
  all(): readonly RunRecord[] { return this.runs; }

  /** Cost reported by the task's finished runs (0 when none reported one). */
  costOf(taskId: string): number { return this.costs.get(taskId) ?? 0; }
}
