import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import { conflict } from '../lib/http-error.ts';
import { withKey } from '../lib/objects.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import type { Logger } from '../lib/log.ts';
import type { Ids } from '../store/ids.ts';
import { isValidId } from '../store/ids.ts';
import { isTaskFile, type SddLayout } from '../store/layout.ts';
import type { Actor } from '../lib/route.ts';
import { VersionConflict as RecordVersionConflict, type Effects, type RecordStore, type UpdateOptions } from '../store/types.ts';
import type { ClaimOptions, Completion, Reservation, TaskFilter, Tasks } from './api.ts';
import { Board } from './board.ts';
import { claimNext, claimOne, type NextOptions } from './claims.ts';
import { createTask, selfCreate } from './create.ts';
import { completeTask } from './lifecycle.ts';
import { noteFor, changeNote } from './notes.ts';
import { readProgress, reportProgress } from './progress.ts';
import { loadFromSnapshot, saveBoard, type BoardSnapshot } from './snapshot.ts';
import { Draining, TaskNotFound, TaskReassigned, VersionConflict } from './errors.ts';
import { transition, type TaskOp } from './machine.ts';
import { parentRollup } from './parents.ts';
import { compactTask, toArchiveRecord, type Task, type TaskCreate, type TaskProgressRequest, type TaskSelfCreate } from './schema.ts';
import type { TenantGate } from '../auth/index.ts';

/** What the audit log is told about a change to a task. */
export type TaskAuditEntry = {
  actor: string;
  action: string;
  resource_type: 'task';
  resource_id: string;
  details: Record<string, unknown>;
};

export interface TaskDeps {
  layout: SddLayout;
  /** Writes a change with its audit entry and archive record as one durable unit. */
  store: RecordStore;
  clock: Clock;
  ids: Ids;
  log: Logger;
  tenants: TenantGate;
  config: Config;
  /** Long-poll waits and retries run on these (default: the real ones). */
  timers?: Timers;
}

export type { Actor } from '../lib/route.ts';
export { changeNote } from './notes.ts';

/** The cluster's say over what nodes do with tasks (installed by src/cluster). */
export interface NodeHooks {
  /** Why this node may not claim now (cordoned, draining, not registered), or null. */
  claimRefusal(nodeId: string): string | null;
  /** A write from a node on a task it no longer holds was refused. */
  fenced(taskId: string, nodeId: string): void;
}

type Listener = (task: Task) => void;

/** Fields `patch` may change. */
export interface PatchFields {
  role?: string;
  priority?: number;
  model?: string | null;
  metadata?: Record<string, unknown>;
  title?: string;
  description?: string;
}

/** How apply runs an operation. */
export interface ApplyOptions {
  /** Compare-and-set: the store refuses (its VersionConflict) unless the task is at this version. */
  expectedVersion?: number;
  /** Throw to refuse the operation on the current record (claim blockers). */
  check?: (t: Task) => void;
  /** Refuse (TaskReassigned) unless the task is still claimed by this session. */
  heldBy?: string;
  /** false: no parent roll-up (inside a cascade). */
  rollUp?: boolean;
  /** More lines of the same change (a first progress report's lines, with its start). */
  appends?: (next: Task) => Effects['appends'];
  /** An audit entry journaled before the operation's own (complete from open records its implicit claim). */
  auditFirst?: (next: Task, from: string) => { action: string; details: Record<string, unknown> } | null;
  /** The change passed its checks and is queued for the next group commit (the store's UpdateOptions.queued). */
  queued?: () => void;
}

/**
 * Owns the board: reads from memory, writes through the store (compare-and-set), audits every transition.
 * Other domains see it as `Tasks` (api.ts); the board and deps are for src/tasks alone.
 */
export class TaskService implements Tasks {
  /** Replaced only while it loads (a snapshot that must be loaded again: tasks/snapshot.ts). */
  board = new Board();
  draining = false;
  /** Set by the cluster when it runs; without it node tokens claim and write like any agent. */
  nodes: NodeHooks | null = null;
  private listeners = new Set<Listener>();
  // Creations between the quota/title check and the board (per tenant), so concurrent requests see each other.
  private inflight = new Map<string, { count: number; titles: Map<string, number> }>();

  /** The timers of waits and retries (deps.timers, else the real ones). */
  readonly timers: Timers;

  constructor(readonly deps: TaskDeps) {
    this.timers = deps.timers ?? systemTimers;
  }

  /** Hold quota slots and title keys for tasks being created; call the result once they are on the board or failed. */
  reserve(tenant: string, titleKeys: string[]): () => void {
    const r = this.inflight.get(tenant) ?? { count: 0, titles: new Map<string, number>() };
    this.inflight.set(tenant, r);
    r.count += titleKeys.length;
    for (const k of titleKeys) r.titles.set(k, (r.titles.get(k) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      r.count -= titleKeys.length;
      for (const k of titleKeys) { const n = (r.titles.get(k) ?? 1) - 1; if (n > 0) r.titles.set(k, n); else r.titles.delete(k); }
      if (r.count === 0) this.inflight.delete(tenant);
    };
  }

  /** Tasks of a tenant counted against its quota: active on the board plus creations in flight. */
  activeCount(tenant: string): number {
    return this.board.countActive(tenant) + (this.inflight.get(tenant)?.count ?? 0);
  }

  /** True when a task with this title key is being created in the tenant right now. */
  titlePending(tenant: string, key: string): boolean {
    return this.inflight.get(tenant)?.titles.has(key) ?? false;
  }

  /**
   * Load every task into memory (at start, under the server lock): from `snapshot` (the last stop's) for the
   * files it still matches, else from the files. How many were loaded, and how many from the snapshot.
   */
  async load(snapshot?: BoardSnapshot): Promise<{ loaded: number; fromSnapshot: number }> {
    const target = { board: () => this.board, fresh: () => (this.board = new Board()), prepare: fromFile };
    const fromSnapshot = snapshot ? await loadFromSnapshot(this.deps, snapshot, target) : null;
    if (fromSnapshot === null) {
      const shards = await readdir(this.deps.layout.tasksDir).catch(() => [] as string[]);
      await this.board.load((put) => this.readShards(shards, (t) => put(fromFile(t))));
    }
    return { loaded: this.board.size, fromSnapshot: fromSnapshot ?? 0 };
  }

  /** Write the board to `file` for the next start (at a stop, once nothing changes it); how many tasks. */
  saveSnapshot(file: string): Promise<number> {
    return saveBoard(this.deps.layout, file, this.board.all());
  }

  /**
   * Read the task folders of `paths` (relative to `.sdd`, e.g. files restored from the ref while the board
   * loaded) again and put their tasks on the board; a task already there is replaced by the same record.
   */
  async reload(paths: readonly string[]): Promise<void> {
    const shards = new Set<string>();
    for (const p of paths) if (isTaskFile(p)) shards.add(p.split('/')[1]!);
    await this.readShards([...shards], (t) => this.board.upsert(fromFile(t)));
  }

  // Every shard asked for at once: the store reads on while this parses what has arrived. `put` gets the parsed records.
  private async readShards(shards: readonly string[], put: (task: Task) => void): Promise<void> {
    const dir = this.deps.layout.tasksDir;
    await Promise.all(shards.map(async (shard) => {
      for (const [name, text] of await this.deps.store.readFolder(join(dir, shard))) {
        if (!isValidId(name.slice(0, -5))) continue;
        try {
          put(JSON.parse(text) as Task);
        } catch {
          // An unreadable file is skipped, as a torn JSONL line is.
        }
      }
    }));
  }

  /** Called with every task after it changes (long-poll waiters, the orchestrator). */
  onChange(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The task if it exists in the caller's tenant, else TaskNotFound. */
  visible(id: string, tenant: string): Task {
    const t = isValidId(id) ? this.board.get(id) : undefined;
    if (!t || t.tenant !== tenant) throw new TaskNotFound(id);
    return t;
  }

  /** Lease fencing: 409 when a node acts on a task that is no longer its own (stolen, re-claimed). */
  fence(task: Task, who: Actor): void {
    if (who.node === undefined || task.node_id === who.node) return;
    this.nodes?.fenced(task.id, who.node);
    throw conflict(`Task '${task.id}' is no longer held by node '${who.node}'`);
  }

  /** Refuse creations and claims while draining. */
  assertAccepting(): void {
    if (this.draining) throw new Draining();
  }

  /**
   * Apply one state-machine operation to a task with compare-and-set. The change, its audit entries and,
   * when it ends the task, its archive record are written as one.
   */
  async apply(id: string, op: TaskOp, input: Record<string, unknown>, who: Actor, opts: ApplyOptions = {}): Promise<Task> {
    const { title } = this.visible(id, who.tenant);
    let from = '';
    const next = await this.deps.store.update<Task>(
      this.deps.layout.task(id),
      (cur) => {
        // The tenant was checked by visible() above and never changes: the current record needs no second look.
        if (opts.heldBy !== undefined && cur.claimed_by_session !== opts.heldBy) throw new TaskReassigned(id, opts.heldBy, cur.claimed_by_session);
        if (op !== 'claim') this.fence(cur, who);
        opts.check?.(cur);
        from = cur.status;
        return transition(upgrade(cur), op, input as never, this.deps.clock.iso());
      },
      {
        expectedVersion: opts.expectedVersion, note: noteFor(op, { id, title }, who, input), queued: opts.queued, ...this.onBoard(id),
        effects: (n) => {
          // Every way into done or failed leaves an archive record (complete, fail, roll-up, orchestrator).
          const ended = (n.status === 'done' || n.status === 'failed') && from !== n.status;
          const archive = ended ? [{ abs: this.deps.layout.archive, value: toArchiveRecord(n) }] : [];
          const first = opts.auditFirst?.(n, from);
          const audit = this.auditEntry(n, who, `task.${op}`, { from, to: n.status });
          return { audit: first ? [this.auditEntry(n, who, first.action, first.details), audit] : audit, appends: [...archive, ...(opts.appends?.(n) ?? [])] };
        },
      },
    ).catch((err: unknown) => {
      if (err instanceof RecordVersionConflict) throw new VersionConflict(id, err.current.version, err.expected);
      throw err;
    });
    this.notify(next);
    if (next.parent_task_id && next.status !== from && opts.rollUp !== false) await this.rollUp(next.parent_task_id);
    return next;
  }

  /**
   * Change role, priority, model (PATCH), metadata (the orchestrator's notes) or title and description (a
   * ticket edited at its tracker); no state transition. `check` may refuse on the current record.
   */
  async patch(id: string, fields: PatchFields, who: Actor, opts: { check?: (t: Task) => void } = {}): Promise<Task> {
    const { title } = this.visible(id, who.tenant);
    const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const next = await this.deps.store.update<Task>(this.deps.layout.task(id), (cur) => {
      opts.check?.(cur);
      return { ...upgrade(cur), ...changes, updated_at: this.deps.clock.iso() };
    }, { note: changeNote('patch', { id, title }, who), effects: (n) => ({ audit: this.auditEntry(n, who, 'task.patch', changes) }), ...this.onBoard(id) });
    this.notify(next);
    return next;
  }

  /** The audit entry of a change to a task; `details.version` says which change it was. */
  auditEntry(task: Task, who: Actor, action: string, details: Record<string, unknown>): TaskAuditEntry {
    return { actor: who.actor, action, resource_type: 'task', resource_id: task.id, details: withKey(details, 'version', task.version) };
  }

  /** Put a task that changed on disk on the board (compact: schema.ts compactTask) and tell listeners. */
  changed(task: Task): void {
    // A changed record is parsed from its file's text: its empty lists and metadata become the shared ones
    // (12 MiB over 100k tasks that went through claim and complete).
    this.board.upsert(compactTask(task));
    this.notify(task);
  }

  // The store takes a task's current record from the board and puts the new one there before the next
  // change of the task can start (still under its compare-and-set): the board is the file, never behind.
  private onBoard(id: string): Pick<UpdateOptions<Task>, 'current' | 'written'> {
    return { current: () => this.board.get(id), written: (n) => this.board.upsert(compactTask(n)) };
  }

  // Tell listeners a task changed (it is on the board already).
  private notify(task: Task): void {
    for (const fn of this.listeners) {
      try {
        fn(task);
      } catch (err) {
        this.deps.log.error('task listener failed', err);
      }
    }
  }

  // --- Tasks (api.ts): the narrow interface other domains use ---
  create(input: TaskCreate, who: Actor): Promise<Task> { return createTask(this, input, who); }
  claim(id: string, opts: ClaimOptions, who: Actor): Promise<Task> { return claimOne(this, id, opts, who); }
  next(role: string, opts: NextOptions, who: Actor, signal?: AbortSignal): Promise<Task> { return claimNext(this, role, opts, who, signal); }
  complete(id: string, body: Completion, who: Actor): Promise<Task> { return completeTask(this, id, body, who); }
  reportProgress(id: string, body: TaskProgressRequest, who: Actor): Promise<Task> { return reportProgress(this, id, body, who); }
  createSubtask(input: TaskSelfCreate, who: Actor): Promise<Task> { return selfCreate(this, input, who); }
  get(id: string): Task | undefined { return this.board.get(id); }
  counts(tenant?: string) { return this.board.counts(tenant); }
  tally() { return { byStatusRole: this.board.statusRoleCounts(), readyByRole: this.board.readyByRole() }; }
  progress(id: string, who: Actor) { return readProgress(this, id, who); }
  drain(on: boolean): void { this.draining = on; }
  get size(): number { return this.board.size; }
  each(): Iterable<Task> { return this.board.each(); }
  list(f: TaskFilter = {}): Task[] {
    const statuses = f.ready ? ['open' as const] : f.status === undefined ? undefined : typeof f.status === 'string' ? [f.status] : f.status;
    // The narrowest index first: a parent's children, a status's tasks, a tenant's; the rest filtered.
    const from = f.parent !== undefined ? this.board.children(f.parent).filter((t) => !statuses || statuses.includes(t.status))
      : statuses ? statuses.flatMap((s) => this.board.byStatus(s)) : f.tenant !== undefined ? this.board.ofTenant(f.tenant) : this.board.all();
    return from.filter((t) => (f.tenant === undefined || t.tenant === f.tenant) && (!f.ready || this.board.depsSatisfied(t)));
  }
  reserveNext(role: string, tenant: string): Reservation | undefined {
    const task = this.board.takeNext(role, tenant);
    return task && { task, release: () => this.board.putBack(task) };
  }

  // A waiting parent resumes when its children finish (DECISIONS.md: done, or blocked naming the failures).
  private async rollUp(parentId: string): Promise<void> {
    const parent = this.board.get(parentId);
    if (!parent || parent.status !== 'waiting_for_subtasks') return;
    const decision = parentRollup(parent, this.board.children(parentId));
    if (!decision) return;
    const sys = { actor: 'svc', tenant: parent.tenant };
    try {
      if (decision.to === 'done') await this.apply(parentId, 'complete', { result_summary: decision.summary }, sys);
      else await this.apply(parentId, 'block', { reason: decision.reason }, sys);
    } catch (err) {
      this.deps.log.warn(`parent ${parentId} roll-up skipped: ${(err as Error).message}`);
    }
  }
}

// Fields added to the task record after a file was written get their defaults when it is read.
function upgrade(t: Task): Task {
  return t.branch === undefined ? { ...t, branch: null } : t;
}

// A record just parsed from its file: upgraded, and compact in memory (schema.ts compactTask).
const fromFile = (t: Task): Task => compactTask(upgrade(t));

