import type { Task } from '../tasks/index.ts';

/** What one task change means for the feed and the metrics. */
export interface TaskChangeFacts {
  kind: 'created' | 'updated';
  /** Status before the change (null for a new task). */
  from: string | null;
  to: string;
  /** Seconds the task waited open before this claim (null unless the change is open → claimed). */
  claimWaitS: number | null;
  /** A blocked task closed by a person after merging its work by hand. */
  manualMerge: boolean;
}

interface Seen {
  status: string;
  version: number;
  /** When the task entered its status (ms since the epoch). */
  since: number;
}

const ms = (iso: string | null | undefined): number => {
  const t = Date.parse(iso ?? '');
  return Number.isFinite(t) ? t : 0;
};

/**
 * The last status and version seen per task (pure: times come from the records). Listeners of the task
 * service may hear two changes of one task out of order (each waits for its own audit append), so a
 * change older than the one already seen is dropped (null).
 */
export class TaskTracker {
  private seen = new Map<string, Seen>();

  get size(): number { return this.seen.size; }

  /** Remember the board as it is at start (no facts: nothing changed). */
  seed(tasks: Iterable<Pick<Task, 'id' | 'status' | 'version' | 'updated_at'>>): void {
    for (const t of tasks) this.seen.set(t.id, { status: t.status, version: t.version, since: ms(t.updated_at) });
  }

  /** The facts of a change, or null when it is not newer than what was already seen. */
  observe(t: Pick<Task, 'id' | 'status' | 'version' | 'created_at' | 'updated_at' | 'claimed_at'>): TaskChangeFacts | null {
    const prev = this.seen.get(t.id);
    if (prev && prev.version >= t.version) return null;
    const changed = !prev || prev.status !== t.status;
    this.seen.set(t.id, { status: t.status, version: t.version, since: changed ? ms(prev ? t.updated_at : t.created_at) : prev.since });
    const from = prev?.status ?? null;
    const claimWaitS = from === 'open' && t.status === 'claimed' && prev
      ? Math.max(0, (ms(t.claimed_at ?? t.updated_at) - prev.since) / 1000)
      : null;
    return { kind: prev ? 'updated' : 'created', from, to: t.status, claimWaitS, manualMerge: from === 'blocked' && t.status === 'closed' };
  }

  /** Forget a task (its record was removed). */
  forget(id: string): void { this.seen.delete(id); }
}
