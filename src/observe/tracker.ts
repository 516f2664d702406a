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
  // Per task one number, version × 32 + the status's code (a small integer, no object: 100k finished tasks
  // kept 8 MiB of records here); since when a task is open only for open tasks (the claim wait needs it).
  private seen = new Map<string, number>();
  // Since when, in ms after `base` (the first such time seen): a small integer within ~12 days of it, where epoch
  // ms would be a boxed heap number per open task (1.6 MiB at 100k); times further off are still exact, boxed.
  private openSince = new Map<string, number>();
  private base = 0;
  private codes: string[] = [];

  get size(): number { return this.seen.size; }

  /** Remember the board as it is at start (no facts: nothing changed). */
  seed(tasks: Iterable<Pick<Task, 'id' | 'status' | 'version' | 'updated_at'>>): void {
    for (const t of tasks) this.remember(t.id, t.status, t.version, t.updated_at);
  }

  /** The facts of a change, or null when it is not newer than what was already seen. */
  observe(t: Pick<Task, 'id' | 'status' | 'version' | 'created_at' | 'updated_at' | 'claimed_at'>): TaskChangeFacts | null {
    const prev = this.seen.get(t.id);
    if (prev !== undefined && Math.floor(prev / 32) >= t.version) return null;
    const from = prev === undefined ? null : this.codes[prev % 32]!;
    const since = this.openSince.get(t.id);
    if (from !== t.status) this.remember(t.id, t.status, t.version, prev === undefined ? t.created_at : t.updated_at);
    else this.seen.set(t.id, t.version * 32 + (prev! % 32));
    const claimWaitS = from === 'open' && t.status === 'claimed' && since !== undefined
      ? Math.max(0, (ms(t.claimed_at ?? t.updated_at) - (this.base + since)) / 1000)
      : null;
    return { kind: prev === undefined ? 'created' : 'updated', from, to: t.status, claimWaitS, manualMerge: from === 'blocked' && t.status === 'closed' };
  }

  /** Forget a task (its record was removed). */
  forget(id: string): void {
    this.seen.delete(id);
    this.openSince.delete(id);
  }

  // A task entered `status` at `since` (an ISO time).
  private remember(id: string, status: string, version: number, since: string): void {
    let code = this.codes.indexOf(status);
    if (code < 0) code = this.codes.push(status) - 1; // the task statuses: far fewer than 32
    this.seen.set(id, version * 32 + code);
    if (status !== 'open') this.openSince.delete(id);
    else {
      if (this.base === 0) this.base = ms(since);
      this.openSince.set(id, ms(since) - this.base);
    }
  }
}
