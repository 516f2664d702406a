import type { Progress } from './board-source.ts';
import { ChangeRing, type BoardEvent, type Change } from './changes.ts';
import { cardOf } from './dashboard.ts';
import type { Recorder } from './metrics.ts';
import { TaskTracker } from './tracker.ts';
import type { RunRecord, SessionRecord, Task } from './types.ts';

type Subscriber = (c: Change) => void;

/**
 * The board's change feed: task changes, progress reports and agent starts and exits become numbered
 * changes in a bounded ring (for /events and its Last-Event-ID resume) and counts for the metrics.
 */
export class BoardFeed {
  readonly ring: ChangeRing;
  private readonly tracker = new TaskTracker();
  private readonly progress = new Map<string, Progress>();
  private readonly subscribers = new Set<Subscriber>();

  constructor(private readonly o: { ringSize: number; base: number; recorder?: Recorder; get: (id: string) => Task | undefined; log?: { warn(m: string): void } }) {
    this.ring = new ChangeRing(o.ringSize, o.base);
  }

  /** Remember the board as loaded at start. */
  seed(tasks: Iterable<Task>): void { this.tracker.seed(tasks); }

  /** Clients listening now. */
  get clients(): number { return this.subscribers.size; }

  /** Listen to every new change; returns the unsubscribe function. */
  subscribe(fn: Subscriber): () => void {
    this.subscribers.add(fn);
    return () => { this.subscribers.delete(fn); };
  }

  /** The latest progress report of the task's current run (cleared when the task leaves working states). */
  progressOf(id: string): Progress | undefined { return this.progress.get(id); }

  /** Seed a progress value (at start, for tasks being worked on). */
  setProgress(id: string, p: Progress): void { this.progress.set(id, p); }

  /** A task changed (the task service's listener). */
  taskChanged(t: Task): void {
    const facts = this.tracker.observe(t);
    if (!facts) return;
    const r = this.o.recorder;
    if (facts.kind === 'created') r?.taskCreated();
    else if (facts.from !== facts.to) r?.transition(facts.from ?? 'none', facts.to);
    if (facts.claimWaitS !== null) r?.claimWait(facts.claimWaitS);
    if (facts.manualMerge) r?.merge('manual');
    if (facts.from !== facts.to && t.status !== 'in_progress') this.progress.delete(t.id);
    // The card is built when a client first reads the change (none listening: never); records never change.
    const progress = this.progress.get(t.id);
    const from = facts.from;
    this.publish(facts.kind === 'created' ? 'task_created' : 'task_updated', t.tenant, () => ({ ...cardOf(t, progress), from }));
  }

  /** A progress report was stored for a task. */
  progressed(id: string, p: Progress): void {
    const t = this.o.get(id);
    if (!t) return;
    this.progress.set(id, p);
    this.publish('task_updated', t.tenant, { ...cardOf(t, p), from: t.status });
  }

  /** An agent process started. */
  agentStarted(s: SessionRecord): void {
    this.publish('agent_started', s.tenant, this.agentData(s));
  }

  /** An agent session was retired (its run recorded). */
  agentExited(s: SessionRecord, run: RunRecord | null): void {
    if (run) this.o.recorder?.runEnded(run);
    this.publish('agent_exited', s.tenant, { ...this.agentData(s), outcome: run?.outcome ?? null, seconds: run?.seconds ?? null });
  }

  private agentData(s: SessionRecord) {
    return {
      id: s.session_id, status: s.status, version: this.o.get(s.task_id)?.version ?? null, task_id: s.task_id, role: s.role,
      adapter: s.adapter, model: s.model, pid: s.pid, started_at: s.started_at, ended_at: s.ended_at, trace_id: s.trace_id ?? null,
    };
  }

  private publish(event: BoardEvent, tenant: string, data: unknown): void {
    const c = this.ring.push(event, tenant, data);
    this.o.recorder?.event(event);
    for (const fn of this.subscribers) {
      try {
        fn(c);
      } catch (err) {
        this.o.log?.warn(`event subscriber failed: ${(err as Error).message}`);
      }
    }
  }
}
