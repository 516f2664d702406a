import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { classifyTask } from '../compliance/index.ts';
import { notFound, unprocessable } from '../lib/http-error.ts';
import { isOwnTemp } from '../store/atomic.ts';
import { folderEntries } from '../store/sdd-walk.ts';
import { RecordExists } from '../store/types.ts';
import { findCycle } from './graph.ts';
import { parentShouldSplit } from './parents.ts';
import { metadataTooLarge, newTask, titleKey, type Task, type TaskCreate } from './schema.ts';
import { changeNote } from './notes.ts';
import type { Actor, TaskService } from './service.ts';

/** Create one task: dependencies exist and form no cycle, parent exists, quota holds. */
export async function createTask(svc: TaskService, input: TaskCreate, who: Actor): Promise<Task> {
  svc.assertAccepting();
  const task = prepare(svc, input, who, []);
  svc.deps.tenants.checkQuota(who.tenant, svc.activeCount(who.tenant), 1);
  // Reserved synchronously after the check, so concurrent creations cannot all pass the same quota check.
  const release = svc.reserve(who.tenant, [titleKey(task.title)]);
  try {
    await persist(svc, task, who);
    svc.changed(task); // on the board before the reservation goes: the quota always counts it
  } finally {
    release();
  }
  return task;
}

/**
 * Create several tasks all-or-nothing (the store writes them as one unit); titles already on the
 * board (or earlier in the batch) are skipped.
 */
export async function createBatch(svc: TaskService, items: TaskCreate[], who: Actor): Promise<{ created: Task[]; skipped_titles: string[] }> {
  svc.assertAccepting();
  const seen = new Set(svc.board.all().filter((t) => t.tenant === who.tenant).map((t) => titleKey(t.title)));
  const tasks: Task[] = [];
  const skipped: string[] = [];
  for (const item of items) {
    const key = titleKey(item.title);
    // A title being created by a concurrent request counts as taken too (a retried batch creates nothing twice).
    if (seen.has(key) || svc.titlePending(who.tenant, key)) { skipped.push(item.title); continue; }
    seen.add(key);
    tasks.push(prepare(svc, item, who, tasks));
  }
  svc.deps.tenants.checkQuota(who.tenant, svc.activeCount(who.tenant), tasks.length);
  const release = svc.reserve(who.tenant, tasks.map((t) => titleKey(t.title)));
  try {
    await svc.deps.store.createAll(tasks.flatMap((t) => creations(svc, t, who, { batch: true })));
    for (const t of tasks) svc.changed(t);
  } finally {
    release();
  }
  return { created: tasks, skipped_titles: skipped };
}

// A task's files: the task (with its note and audit entry) and its EU AI Act record (.sdd/eu_ai_act/<id>.json,
// compliance domain), created together so the record is committed into refs/sdd/state with the task.
function creations(svc: TaskService, task: Task, who: Actor, extra: Record<string, unknown> = {}) {
  const audit = svc.auditEntry(task, who, 'task.create', { title: task.title, role: task.role, ...extra });
  return [
    { abs: svc.deps.layout.task(task.id), value: task as Task | ReturnType<typeof classifyTask>, note: changeNote('create', task, who), effects: { audit } },
    { abs: svc.deps.layout.euAiAct(task.id), value: classifyTask(task) },
  ];
}

// Both files in one store write; a record left by an undone creation (a shared tree) stays, the task alone is created.
async function persist(svc: TaskService, task: Task, who: Actor): Promise<void> {
  const [own, risk] = creations(svc, task, who) as [ReturnType<typeof creations>[0], ReturnType<typeof creations>[1]];
  try {
    await svc.deps.store.createAll([own, risk]);
  } catch (err) {
    if (!(err instanceof RecordExists && err.path === risk.abs)) throw err;
    await svc.deps.store.create(own.abs, task, own);
  }
}

/** When a backfill may read the records' folder (every file restored) and when it may write `.sdd`. */
export interface BackfillGates { readable?: Promise<unknown>; writable?: Promise<unknown> }

/**
 * Write the EU AI Act record of every task on the board that has none (at start); returns how many were
 * written. The folder is read once `readable`, the writes wait for `writable`: a start finds what is missing
 * while it still compares the files with the ref (100k names, ~0.15 s), and writes after. The tasks are those on
 * the board now: when the folder is compared after the start, a task created meanwhile has its record from its
 * creation, written behind the journal (it may not be in the folder yet).
 */
export async function backfillRiskRecords(svc: TaskService, gates: BackfillGates = {}): Promise<number> {
  const dir = svc.deps.layout.euAiActDir;
  const ids: string[] = [];
  for (const t of svc.board.each()) ids.push(t.id);
  await gates.readable;
  const names: string[] = [];
  try {
    for (const e of folderEntries(dir)) names.push(e.name); // 100k names in ~0.06 s (readdir sorts them first, on the thread pool, while the start waits)
  } catch {
    names.length = 0; // no folder yet: every task lacks its record
  }
  const have = new Set(names.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)));
  const missing: Task[] = [];
  for (const id of ids) {
    const t = have.has(id) ? undefined : svc.board.get(id);
    if (t) missing.push(t);
  }
  await gates.writable;
  // Temp files of a server SIGKILLed mid-write (we hold the server lock, so they are dead); this one's own are
  // its writes in flight.
  await Promise.all(names.filter((f) => f.endsWith('.tmp') && !isOwnTemp(f)).map((f) => rm(join(dir, f), { force: true })));
  // 64 at a time, so an old board's records share journal datasyncs instead of paying one each.
  for (let i = 0; i < missing.length; i += 64) {
    await Promise.all(missing.slice(i, i + 64).map((t) => svc.deps.store.writeJson(svc.deps.layout.euAiAct(t.id), classifyTask(t), `eu_ai_act ${t.id}`)));
  }
  return missing.length;
}

/** Create a subtask under a parent (same tenant, cell, coordinator session) and park the parent. */
export async function selfCreate(svc: TaskService, input: TaskCreate & { parent_task_id: string }, who: Actor): Promise<Task> {
  const parent = svc.board.get(input.parent_task_id);
  if (!parent || parent.tenant !== who.tenant) throw notFound(`Parent task '${input.parent_task_id}' not found`);
  const child = await createTask(svc, { ...input, cell_id: input.cell_id ?? parent.cell_id ?? undefined, parent_session_id: input.parent_session_id ?? parent.parent_session_id ?? undefined }, who);
  if (parentShouldSplit(parent)) {
    await svc.apply(parent.id, 'split', { subtask_count: svc.board.children(parent.id).length }, who).catch((err) => {
      svc.deps.log.warn(`parent ${parent.id} not moved to waiting_for_subtasks: ${(err as Error).message}`);
    });
  }
  return child;
}

// Checks that need the board; `pending` are earlier tasks of the same batch.
function prepare(svc: TaskService, input: TaskCreate, who: Actor, pending: Task[]): Task {
  if (input.metadata && metadataTooLarge(input.metadata)) throw unprocessable('metadata exceeds 50000 bytes as JSON');
  const lookup = (id: string) => svc.board.get(id) ?? pending.find((p) => p.id === id);
  const deps = input.depends_on ?? [];
  const missing = deps.filter((d) => !lookup(d) || lookup(d)!.tenant !== who.tenant);
  if (missing.length) throw unprocessable(`depends_on references non-existent task(s): ${missing.join(', ')}`);
  if (input.parent_task_id) {
    const parent = lookup(input.parent_task_id);
    if (!parent || parent.tenant !== who.tenant) throw notFound(`Parent task '${input.parent_task_id}' not found`);
  }
  const id = svc.deps.ids.next();
  const cycle = findCycle(id, deps, (x) => lookup(x)?.depends_on);
  if (cycle) throw unprocessable(`Circular dependency detected: ${cycle.join(' -> ')}`);
  return newTask(input, { id, now: svc.deps.clock.iso(), tenant: who.tenant });
}
