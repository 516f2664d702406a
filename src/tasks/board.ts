import { ACTIVE, depSatisfied, ownerKey, WORKING } from './machine.ts';
import { byCreation, emptyCounts } from './query.ts';
import type { Task, TaskCounts, TaskStatus } from './schema.ts';
import { Heap, type Entry } from './heap.ts';

/** Task texts jsonOf keeps for the next list (~1 KB each). */
export const TEXTS_KEPT = 10_000;

// One string per (tenant, role), shared by every entry of that queue.
const queueKeys = new Map<string, Map<string, string>>();
const queueKey = (tenant: string, role: string): string => {
  let roles = queueKeys.get(tenant);
  if (!roles) queueKeys.set(tenant, (roles = new Map()));
  let key = roles.get(role);
  if (key === undefined) roles.set(role, (key = `${tenant}\u0000${role}`));
  return key;
};
const add = <K, V>(m: Map<K, Set<V>>, k: K, v: V) => { let s = m.get(k); if (!s) m.set(k, (s = new Set())); s.add(v); };
const del = <K, V>(m: Map<K, Set<V>>, k: K, v: V) => { const s = m.get(k); if (s?.delete(v) && s.size === 0) m.delete(k); };

/**
 * The in-memory index of every task: by status, parent, dependency and tenant counts, plus a ready queue per
 * (tenant, role). Synchronous, so concurrent async callers never take the same task. O(log n) per change.
 */
export class Board {
  private tasks = new Map<string, Task>();
  private statusIdx = new Map<TaskStatus, Set<string>>();
  private childIdx = new Map<string, Set<string>>();
  private dependentIdx = new Map<string, Set<string>>();
  private tenantCounts = new Map<string, TaskCounts>();
  private roleCounts = new Map<TaskStatus, Map<string, number>>();
  private owners = new Map<string, Task>();
  private queues = new Map<string, Heap>();
  private readyInfo = new Map<string, Entry>();
  private live = new Map<string, number>();
  private order: string[] = [];
  private orderSorted = true;
  // While a load fills the board, ready queues are built once at its end, not per task.
  private loading = false;
  // JSON bytes per task object: lists of large tasks are not serialised again on every request (a changed task is a new object).
  // The JSON of tasks lists sent lately, by record (a change makes a new record): the oldest go beyond
  // TEXTS_KEPT, or one full list of a 100k board would keep ~100 MB of them until each task changed.
  private texts = new Map<Task, Buffer>();

  get size(): number { return this.tasks.size; }
  /** The task with this id. */
  get(id: string): Task | undefined { return this.tasks.get(id); }
  /** Every task in creation order (created_at, then id). */
  all(): Task[] {
    if (!this.orderSorted) {
      // The records sorted with byCreation, then their own id strings: on the 100k records of a start 0.17–0.21 s,
      // against 0.38–0.58 s for a key string per task sorted natively (whose slices also kept every key alive, 10 MiB).
      this.order = [...this.tasks.values()].sort(byCreation).map((t) => t.id);
      this.orderSorted = true;
    }
    return this.order.map((id) => this.tasks.get(id)!);
  }
  /** Every task in no particular order (no sort: for a pass over the whole board). */
  each(): IterableIterator<Task> { return this.tasks.values(); }
  /** The JSON of a task of this board as UTF-8 bytes, serialised once per version. */
  jsonOf(t: Task): Buffer {
    let bytes = this.texts.get(t);
    if (bytes !== undefined) return bytes;
    if (this.texts.size >= TEXTS_KEPT) this.texts.delete(this.texts.keys().next().value!);
    this.texts.set(t, (bytes = Buffer.from(JSON.stringify(t))));
    return bytes;
  }
  /** How many task texts jsonOf keeps (at most TEXTS_KEPT). */
  get textsKept(): number {
    return this.texts.size;
  }
  /** Every task of one tenant, in creation order. */
  ofTenant(tenant: string): Task[] { return this.all().filter((t) => t.tenant === tenant); }
  /** Tasks currently in `status`. */
  byStatus(status: TaskStatus): Task[] { return this.pick(this.statusIdx.get(status)); }
  /** Direct subtasks (parent_task_id = id). */
  children(id: string): Task[] { return this.pick(this.childIdx.get(id)); }
  /** Tasks whose depends_on names id. */
  dependents(id: string): Task[] { return this.pick(this.dependentIdx.get(id)); }
  /** ownerKey(tenant, file) -> the claimed/in_progress task of that tenant that owns it (for claimBlockers). */
  activeOwners(): ReadonlyMap<string, Task> { return this.owners; }
  /** Counts per status plus total, for one tenant or all. */
  counts(tenant?: string): TaskCounts {
    if (tenant !== undefined) return { ...(this.tenantCounts.get(tenant) ?? emptyCounts()) };
    const sum = emptyCounts();
    for (const c of this.tenantCounts.values()) for (const k of Object.keys(sum) as (keyof TaskCounts)[]) sum[k] += c[k];
    return sum;
  }
  /** Tasks of a tenant that count against its quota (non-terminal, not done). */
  countActive(tenant: string): number {
    const c = this.tenantCounts.get(tenant);
    let n = 0;
    if (c) for (const s of ACTIVE) n += c[s];
    return n;
  }
  /** Tasks per status and role (a role whose count fell to 0 stays, with 0): O(1), kept as tasks change. */
  statusRoleCounts(): ReadonlyMap<TaskStatus, ReadonlyMap<string, number>> { return this.roleCounts; }
  /** Claimable tasks queued per role, all tenants together (roles with none queued left out). */
  readyByRole(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [queue, n] of this.live) {
      if (n <= 0) continue;
      const role = queue.slice(queue.indexOf('\u0000') + 1);
      out.set(role, (out.get(role) ?? 0) + n);
    }
    return out;
  }
  /** Number of claimable tasks queued for (role, tenant). */
  readyCount(role: string, tenant: string): number { return this.live.get(queueKey(tenant, role)) ?? 0; }
  /** True when every dependency exists and is satisfied (closed, or done without an agent branch to merge). */
  depsSatisfied(task: Task): boolean {
    return task.depends_on.every((d) => { const t = this.tasks.get(d); return t !== undefined && depSatisfied(t); });
  }

  /** Fill the board from many tasks at once (at start): every index, then each ready queue built in O(n). */
  async load(fill: (put: (task: Task) => void) => Promise<void>): Promise<void> {
    this.loading = true;
    try {
      await fill((t) => this.upsert(t));
    } finally {
      this.loading = false;
    }
    const byQueue = new Map<string, Entry[]>();
    for (const t of this.byStatus('open')) {
      if (!this.depsSatisfied(t)) continue;
      const e: Entry = { id: t.id, priority: t.priority, created_at: t.created_at, queue: queueKey(t.tenant, t.role) };
      this.setReady(t.id, e);
      const list = byQueue.get(e.queue);
      if (list) list.push(e); else byQueue.set(e.queue, [e]);
    }
    for (const [queue, items] of byQueue) {
      const heap = this.queues.get(queue) ?? new Heap();
      for (const e of items) heap.items.push(e);
      heap.rebuild(() => true);
      this.queues.set(queue, heap);
    }
  }

  /** Insert or replace a task and update every index; dependents become ready when it becomes satisfied. */
  upsert(task: Task): void {
    const prev = this.tasks.get(task.id);
    if (prev) this.unindex(prev);
    else this.noteNewId(task);
    this.tasks.set(task.id, task);
    this.index(task);
    if (this.loading) return;
    this.refreshReady(task);
    if (!prev || depSatisfied(prev) !== depSatisfied(task)) {
      for (const d of this.dependents(task.id)) this.refreshReady(d);
    }
  }

  /** Forget a task (e.g. its file disappeared). */
  remove(id: string): void {
    const prev = this.tasks.get(id);
    if (!prev) return;
    this.unindex(prev);
    this.tasks.delete(id);
    this.setReady(id, undefined);
    this.order = this.order.filter((x) => x !== id);
    for (const d of this.dependents(id)) this.refreshReady(d);
  }

  /**
   * Pop the best ready task of (role, tenant) that passes `filter`, or undefined. The task leaves the queue
   * until it changes or is put back; entries made stale by later upserts are dropped here.
   */
  takeNext(role: string, tenant: string, filter?: (t: Task) => boolean): Task | undefined {
    const heap = this.queues.get(queueKey(tenant, role));
    if (!heap) return undefined;
    const skipped: Entry[] = [];
    let found: Task | undefined;
    while (!found && heap.size > 0) {
      const e = heap.pop()!;
      if (this.readyInfo.get(e.id) !== e) continue;
      const t = this.tasks.get(e.id)!;
      if (t.status !== 'open' || !this.depsSatisfied(t)) this.setReady(e.id, undefined);
      else if (filter && !filter(t)) skipped.push(e);
      else { this.setReady(e.id, undefined); found = t; }
    }
    for (const e of skipped) heap.push(e);
    return found;
  }

  /** Return a task taken with takeNext whose claim failed; it is queued again if it is still ready. */
  putBack(task: Task): void {
    const cur = this.tasks.get(task.id);
    if (cur) this.refreshReady(cur);
  }

  private pick(ids: Set<string> | undefined): Task[] {
    return ids ? [...ids].map((id) => this.tasks.get(id)).filter((t): t is Task => t !== undefined) : [];
  }

  // New tasks are almost always the newest, so the creation order usually just grows at the end.
  private noteNewId(task: Task): void {
    const lastId = this.order[this.order.length - 1];
    const last = lastId === undefined ? undefined : this.tasks.get(lastId);
    if (this.orderSorted && (!last || byCreation(last, task) < 0)) this.order.push(task.id);
    else this.orderSorted = false;
  }

  private index(t: Task): void {
    add(this.statusIdx, t.status, t.id);
    if (t.parent_task_id !== null) add(this.childIdx, t.parent_task_id, t.id);
    for (const d of t.depends_on) add(this.dependentIdx, d, t.id);
    let c = this.tenantCounts.get(t.tenant);
    if (!c) this.tenantCounts.set(t.tenant, (c = emptyCounts()));
    c[t.status] += 1;
    c.total += 1;
    let roles = this.roleCounts.get(t.status);
    if (!roles) this.roleCounts.set(t.status, (roles = new Map()));
    roles.set(t.role, (roles.get(t.role) ?? 0) + 1);
    if (WORKING.has(t.status)) for (const f of t.owned_files) this.owners.set(ownerKey(t.tenant, f), t);
  }

  private unindex(t: Task): void {
    del(this.statusIdx, t.status, t.id);
    if (t.parent_task_id !== null) del(this.childIdx, t.parent_task_id, t.id);
    for (const d of t.depends_on) del(this.dependentIdx, d, t.id);
    const c = this.tenantCounts.get(t.tenant)!;
    c[t.status] -= 1;
    c.total -= 1;
    const roles = this.roleCounts.get(t.status)!;
    roles.set(t.role, roles.get(t.role)! - 1);
    for (const f of t.owned_files) if (this.owners.get(ownerKey(t.tenant, f))?.id === t.id) this.owners.delete(ownerKey(t.tenant, f));
  }

  // Queue the task if it is ready and not already queued with the same ordering keys; unqueue it otherwise.
  private refreshReady(t: Task): void {
    if (t.status !== 'open' || !this.depsSatisfied(t)) return this.setReady(t.id, undefined);
    const queue = queueKey(t.tenant, t.role);
    const cur = this.readyInfo.get(t.id);
    if (cur && cur.queue === queue && cur.priority === t.priority && cur.created_at === t.created_at) return;
    const e: Entry = { id: t.id, priority: t.priority, created_at: t.created_at, queue };
    this.setReady(t.id, e);
    let heap = this.queues.get(queue);
    if (!heap) this.queues.set(queue, (heap = new Heap()));
    heap.push(e);
    // Lazy deletion leaves dead entries behind; compact when they outnumber the live ones.
    if (heap.size > 64 && heap.size > 2 * (this.live.get(queue) ?? 0)) heap.rebuild((x) => this.readyInfo.get(x.id) === x);
  }

  private setReady(id: string, e: Entry | undefined): void {
    const prev = this.readyInfo.get(id);
    if (prev) this.live.set(prev.queue, (this.live.get(prev.queue) ?? 1) - 1);
    if (e) { this.readyInfo.set(id, e); this.live.set(e.queue, (this.live.get(e.queue) ?? 0) + 1); }
    else this.readyInfo.delete(id);
  }
}
