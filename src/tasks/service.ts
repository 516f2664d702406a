import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import { conflict, notFound, unavailable } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Ids } from '../store/ids.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import type { ChangeNote, Hold, RecordStore } from '../store/types.ts';
import { Board } from './board.ts';
import { transition, type TaskOp } from './machine.ts';
import { parentRollup } from './parents.ts';
import { toArchiveRecord, type Task } from './schema.ts';
import type { TenantGate } from '../auth/index.ts';

/** What the audit log is told about a change to a task. */
export type TaskAuditEntry = {
  actor: string;
  action: string;
  resource_type: 'task';
  resource_id: string;
  details: Record<string, unknown>;
};
/** What the audit log needs to know about a change. */
export interface AuditSink {
  append(entry: TaskAuditEntry): Promise<unknown>;
}


export interface TaskDeps {
  layout: SddLayout;
  store: RecordStore;
  clock: Clock;
  ids: Ids;
  log: Logger;
  audit: AuditSink;
  tenants: TenantGate;
  config: Config;
}

/** Who acts and in which tenant. */
export interface Actor {
  actor: string;
  tenant: string;
  /** A cluster node acting with its token: its claims record it, its writes are fenced to the tasks it holds. */
  node?: string;
}

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
  /** Compare-and-set: refuse (409) unless the task is at this version. */
  expectedVersion?: number;
  /** Throw to refuse the operation on the current record (claim blockers). */
  check?: (t: Task) => void;
  /** false: no parent roll-up (inside a cascade). */
  rollUp?: boolean;
  /** An audit entry appended before the operation's own (complete from open records its implicit claim). */
  auditFirst?: (next: Task, from: string) => { action: string; details: Record<string, unknown> } | null;
}

/** Owns the board: reads from memory, writes through the store (compare-and-set), audits every transition. */
export class TaskService {
  readonly board = new Board();
  draining = false;
  /** Set by the cluster when it runs; without it node tokens claim and write like any agent. */
  nodes: NodeHooks | null = null;
  private listeners = new Set<Listener>();
  // Creations between the quota/title check and the board (per tenant), so concurrent requests see each other.
  private inflight = new Map<string, { count: number; titles: Map<string, number> }>();

  constructor(readonly deps: TaskDeps) {}

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

  /** Load every task file into memory (at start, under the server lock); returns the number loaded. */
  async load(): Promise<number> {
    const dir = this.deps.layout.tasksDir;
    const shards = await readdir(dir).catch(() => [] as string[]);
    let n = 0;
    for (const shard of shards) {
      const names = await readdir(join(dir, shard)).catch(() => [] as string[]);
      // Temp files and record locks of a server that was SIGKILLed mid-write; we hold the server lock, so they are dead.
      await Promise.all(names.filter((f) => f.endsWith('.tmp') || f.endsWith('.lock')).map((f) => rm(join(dir, shard, f), { recursive: true, force: true })));
      const batch = await Promise.all(
        names.filter((f) => f.endsWith('.json') && isValidId(f.slice(0, -5))).map((f) => this.deps.store.readJson<Task>(join(dir, shard, f)).catch(() => undefined)),
      );
      for (const t of batch) if (t) { this.board.upsert(upgrade(t)); n++; }
    }
    return n;
  }

  /** Called with every task after it changes (long-poll waiters, the orchestrator). */
  onChange(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The task if it exists in the caller's tenant, else the contract's 404. */
  visible(id: string, tenant: string): Task {
    const t = isValidId(id) ? this.board.get(id) : undefined;
    if (!t || t.tenant !== tenant) throw notFound(`Task '${String(id).slice(0, 200)}' not found`);
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
    if (this.draining) throw unavailable('Server is draining -- no new claims or creations accepted');
  }

  /** Apply one state-machine operation to a task with compare-and-set; audits it and runs follow-ups. */
  async apply(id: string, op: TaskOp, input: Record<string, unknown>, who: Actor, opts: ApplyOptions = {}): Promise<Task> {
    const { title } = this.visible(id, who.tenant);
    let from = '';
    let next: Task;
    let archived: Promise<unknown> | undefined;
    const held = this.deps.store.hold();
    try {
      next = await this.deps.store.update<Task>(
        this.deps.layout.task(id),
        (cur) => {
          if (cur.tenant !== who.tenant) throw notFound(`Task '${id}' not found`);
          if (op !== 'claim') this.fence(cur, who);
          opts.check?.(cur);
          from = cur.status;
          return transition(upgrade(cur), op, input as never, this.deps.clock.iso());
        },
        { expectedVersion: opts.expectedVersion, note: noteFor(op, { id, title }, who, input), audit: (n: Task) => this.auditEntry(n, who, `task.${op}`, { from, to: n.status }) },
      );
      // Every way into done or failed leaves an archive record (complete, fail, roll-up, orchestrator);
      // it and the audit record are independent durable appends, so their datasyncs overlap.
      archived = (next.status === 'done' || next.status === 'failed') && from !== next.status
        ? this.deps.store.appendJsonl(this.deps.layout.archive, toArchiveRecord(next)).then(() => undefined, (err: unknown) => err)
        : undefined;
      // The task file is the commit point: memory, audit and parent follow it even when the archive line failed.
      const first = opts.auditFirst?.(next, from);
      await this.changed(next, who, `task.${op}`, { from, to: next.status }, held, first ? this.auditEntry(next, who, first.action, first.details) : undefined);
    } finally {
      held.release();
    }
    const archiveError = await archived;
    if (next.parent_task_id && next.status !== from && opts.rollUp !== false) await this.rollUp(next.parent_task_id);
    if (archiveError) throw archiveError;
    return next;
  }

  /**
   * Change role, priority, model (PATCH), metadata (the orchestrator's notes) or title and description (a
   * ticket edited at its tracker); no state transition. `check` may refuse on the current record.
   */
  async patch(id: string, fields: PatchFields, who: Actor, opts: { check?: (t: Task) => void } = {}): Promise<Task> {
    const { title } = this.visible(id, who.tenant);
    const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const held = this.deps.store.hold();
    try {
      const next = await this.deps.store.update<Task>(this.deps.layout.task(id), (cur) => {
        if (cur.tenant !== who.tenant) throw notFound(`Task '${id}' not found`);
        opts.check?.(cur);
        return { ...upgrade(cur), ...changes, updated_at: this.deps.clock.iso() };
      }, { note: changeNote('patch', { id, title }, who), audit: (n: Task) => this.auditEntry(n, who, 'task.patch', changes) });
      await this.changed(next, who, 'task.patch', changes, held);
      return next;
    } finally {
      held.release();
    }
  }

  /**
   * The audit entry of a change to a task; `details.version` says which change it was. The same entry is
   * journaled with the task's write, so a crash before the audit append is made good at the next start.
   */
  auditEntry(task: Task, who: Actor, action: string, details: Record<string, unknown>): TaskAuditEntry {
    return { actor: who.actor, action, resource_type: 'task', resource_id: task.id, details: { ...details, version: task.version } };
  }

  /**
   * Record a change in memory and the audit log (the entry auditEntry gives), then tell listeners. When
   * the append fails (the answer is then 503, the change stands), it is retried in the background under
   * an extension of `held`, so the journaled entry stays until it is in the log or the next start.
   */
  async changed(task: Task, who: Actor, action: string, details: Record<string, unknown>, held?: Hold, before?: TaskAuditEntry): Promise<void> {
    // Memory first, before any await: a later change of the same task must never be overwritten by this one.
    this.board.upsert(task);
    const entry = this.auditEntry(task, who, action, details);
    // Not journaled (the write carries one entry): a crash right here loses it, the main entry still says from 'open'.
    if (before) await this.deps.audit.append(before).catch((err: unknown) => this.deps.log.warn(`audit of ${before.action} on ${task.id} failed: ${(err as Error).message}`));
    try {
      await this.deps.audit.append(entry);
    } catch (err) {
      if (held) this.retryAudit(entry, held.extend());
      throw err;
    }
    for (const fn of this.listeners) {
      try {
        fn(task);
      } catch (err) {
        this.deps.log.error('task listener failed', err);
      }
    }
  }

  /** Stop retrying failed audit appends (shutdown); their entries stay in the journal for the next start. */
  stopAuditRetries(): void {
    this.stopping = true;
    for (const wake of this.retryWakers) wake();
  }

  private stopping = false;
  private retryWakers = new Set<() => void>();
  // Backs off from 100 ms to 10 s; a record appended here lands after later records of the task (its
  // details.version tells the order).
  private retryAudit(entry: TaskAuditEntry, held: Hold): void {
    void (async () => {
      for (let delay = 100; ; delay = Math.min(delay * 2, 10_000)) {
        await new Promise<void>((r) => {
          const wake = () => { clearTimeout(t); this.retryWakers.delete(wake); r(); };
          const t = setTimeout(wake, delay);
          this.retryWakers.add(wake);
        });
        if (this.stopping) { held.abandon(); return; }
        try {
          await this.deps.audit.append(entry);
          held.release();
          this.deps.log.info(`audit record of ${entry.resource_id} v${String(entry.details.version)} appended on retry`);
          return;
        } catch (err) {
          this.deps.log.warn(`audit append for ${entry.resource_id} still failing: ${(err as Error).message}`);
        }
      }
    })();
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

function noteFor(op: string, task: Pick<Task, 'id' | 'title'>, who: Actor, input: Record<string, unknown>): ChangeNote {
  const by = typeof input.claimed_by_session === 'string' ? `by ${input.claimed_by_session}` : undefined;
  return changeNote(op, task, who, by);
}

/** The state commit's words for a change to a task: `claim "Fix login" (01jc…) by backend-3f2a`, with its actor. */
export function changeNote(action: string, task: Pick<Task, 'id' | 'title'>, who: Actor, detail?: string): ChangeNote {
  return { action, id: task.id, title: task.title, actor: who.actor, ...(detail ? { detail } : {}) };
}
