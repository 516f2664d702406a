import type { GateReport } from '../tasks/index.ts';
import type { RunRecord } from './runs.ts';
import type { SessionRecord } from './sessions.ts';

/** How a finished task's merge into the base went (`MergeResult.status`). */
export type MergeOutcome = 'merged' | 'already' | 'deferred' | 'conflict';

/**
 * What the orchestrator tells observers (metrics, the board's change feed) as it works. Every method is
 * optional and called synchronously after the fact is durable; an observer must not throw or block.
 */
export interface AgentObserver {
  /** An agent process was spawned for the session. */
  started?(rec: SessionRecord): void;
  /** The session was retired; `run` is its run record (null when no process ever ran). */
  ended?(rec: SessionRecord, run: RunRecord | null): void;
  /** Gates ran on a done task. */
  gates?(report: GateReport): void;
  /** A merge of a session's branch into the base was tried. */
  merged?(taskId: string, outcome: MergeOutcome): void;
}

/** Call one observer method, logging (never throwing) what it throws. */
export function notify<K extends keyof AgentObserver>(
  o: AgentObserver | undefined, log: { warn(msg: string): void }, key: K, ...args: Parameters<NonNullable<AgentObserver[K]>>
): void {
  const fn = o?.[key] as ((...a: unknown[]) => void) | undefined;
  if (!fn) return;
  try {
    fn.apply(o, args);
  } catch (err) {
    log.warn(`agent observer ${key} failed: ${(err as Error).message}`);
  }
}
