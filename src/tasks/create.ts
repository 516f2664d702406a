import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { classifyTask } from '../compliance/index.ts';
import { notFound, unprocessable } from '../lib/http-error.ts';
import { RecordExists } from '../store/types.ts';
import { findCycle } from './graph.ts';
import { parentShouldSplit } from './parents.ts';
import { metadataTooLarge, newTask, titleKey, type Task, type TaskCreate } from './schema.ts';
import { changeNote, type Actor, type TaskService } from './service.ts';

/** Create one task: dependencies exist and form no cycle, parent exists, quota holds. */
export async function createTask(svc: TaskService, input: TaskCreate, who: Actor): Promise<Task> {
  svc.assertAccepting();
  const task = prepare(svc, input, who, []);
  svc.deps.tenants.checkQuota(who.tenant, svc.activeCount(who.tenant), 1);
  // Reserved synchronously after the check, so concurrent creations cannot all pass the same quota check.
  const release = svc.reserve(who.tenant, [titleKey(task.title)]);
  const details = { title: task.title, role: task.role };
  const held = svc.deps.store.hold();
  try {
    try {
      await persist(svc, task, who, svc.auditEntry(task, who, 'task.create', details));
      svc.board.upsert(task);
    } finally {
      release();
    }
    await svc.changed(task, who, 'task.create', details, held);
  } finally {
    held.release();
  }
  return task;
}

/** Create several tasks all-or-nothing; titles already on the board (or earlier in the batch) are skipped. */
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
  const details = (t: Task) => ({ title: t.title, role: t.role, batch: true });
  const held = svc.deps.store.hold();
  try {
    // Intent first: a crash after this point is rolled forward at start, so the batch is all or nothing.
    const intent = join(svc.deps.layout.runtime, 'batches', `${svc.deps.ids.next()}.json`);
    await mkdir(join(svc.deps.layout.runtime, 'batches'), { recursive: true });
    await svc.deps.store.writeJson(intent, { tasks });
    const { createAll } = svc.deps.store;
    try {
      if (createAll) await createAll(tasks.flatMap((t) => creations(svc, t, who, svc.auditEntry(t, who, 'task.create', details(t)))));
      else await persistAll(svc, tasks, who);
    } catch (err) {
      // createAll leaves nothing behind; files created one by one are taken back.
      if (createAll) await rm(intent, { force: true }).catch(() => undefined);
      else await undoBatch(svc, tasks, who, intent);
      throw err;
    }
    await rm(intent, { force: true });
    for (const t of tasks) svc.board.upsert(t);
    release();
    // Together, so the audit records share datasyncs; the audit chain keeps the call order.
    await Promise.all(tasks.map((t) => svc.changed(t, who, 'task.create', details(t), held)));
  } finally {
    release();
    held.release();
  }
  return { created: tasks, skipped_titles: skipped };
}

// A batch's files are written 32 at a time so their fsyncs overlap; every write settles before a failure is thrown.
async function persistAll(svc: TaskService, tasks: Task[], who: Actor): Promise<void> {
  let next = 0;
  let failed = false;
  let failure: unknown;
  const lane = async () => {
    while (next < tasks.length && !failed) {
      const t = tasks[next++]!;
      try { await persist(svc, t, who, svc.auditEntry(t, who, 'task.create', { title: t.title, role: t.role, batch: true })); } catch (err) { if (!failed) { failed = true; failure = err; } }
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, tasks.length) }, lane));
  if (failed) throw failure;
}

// Disk trouble half-way through a batch: take back the files already written so the 503 is true.
// The intent goes only once every file is gone; if one stays, the next start rolls the batch forward.
async function undoBatch(svc: TaskService, tasks: Task[], who: Actor, intent: string): Promise<void> {
  let undone = true;
  for (const t of tasks) {
    await svc.deps.store.remove(svc.deps.layout.task(t.id), changeNote('undo create', t, who)).catch(() => { undone = false; });
    await svc.deps.store.remove(svc.deps.layout.euAiAct(t.id), changeNote('undo create', t, who)).catch(() => undefined);
  }
  if (undone) await rm(intent, { force: true }).catch(() => undefined);
}

/** Roll forward batches whose intent survived a crash; returns the number of tasks created. */
export async function recoverBatches(svc: TaskService): Promise<number> {
  const dir = join(svc.deps.layout.runtime, 'batches');
  const files = await readdir(dir).catch(() => [] as string[]);
  let n = 0;
  for (const f of files.filter((x) => x.endsWith('.json'))) {
    const intent = JSON.parse(await readFile(join(dir, f), 'utf8').catch(() => '{"tasks":[]}')) as { tasks?: Task[] };
    for (const t of intent.tasks ?? []) {
      // Its creator was never answered; the creation is audited now, by the server, like any other
      // (entry journaled with the file, held until appended).
      const who = { actor: 'svc', tenant: t.tenant };
      const details = { title: t.title, role: t.role, batch: true, rolled_forward: true };
      const held = svc.deps.store.hold();
      try {
        if (!(await persist(svc, t, who, svc.auditEntry(t, who, 'task.create', details)))) continue;
        n++;
        await svc.changed(t, who, 'task.create', details, held);
      } finally {
        held.release();
      }
    }
    await rm(join(dir, f), { force: true });
  }
  return n;
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

// A task's files: the task and its EU AI Act record (.sdd/eu_ai_act/<id>.json, compliance domain), created
// together so the record is committed into refs/sdd/state with the task. The one place a creation names its files.
function creations(svc: TaskService, task: Task, who: Actor, audit?: Record<string, unknown>) {
  return [
    { abs: svc.deps.layout.task(task.id), value: task as Task | ReturnType<typeof classifyTask>, note: changeNote('create', task, who), audit },
    { abs: svc.deps.layout.euAiAct(task.id), value: classifyTask(task) },
  ];
}

// On the server's store both files go in one journal write (no extra latency, both or neither); on a shared
// tree the record follows the task, and backfillRiskRecords at the next start covers a crash in between.
async function persist(svc: TaskService, task: Task, who: Actor, audit?: Record<string, unknown>): Promise<boolean> {
  const [own, risk] = creations(svc, task, who, audit) as [ReturnType<typeof creations>[0], ReturnType<typeof creations>[1]];
  const { store } = svc.deps;
  try {
    if (store.createAll) await store.createAll([own, risk]);
    else {
      await store.create(own.abs, task, own.note, audit);
      await store.writeJson(risk.abs, risk.value);
    }
    return true;
  } catch (err) {
    // A record left by an undone creation: the task alone, the record stays.
    if (err instanceof RecordExists && err.path === risk.abs) return persistAlone(svc, task, who, audit);
    if (err instanceof RecordExists) return false;
    throw err;
  }
}

async function persistAlone(svc: TaskService, task: Task, who: Actor, audit?: Record<string, unknown>): Promise<boolean> {
  try {
    await svc.deps.store.create(svc.deps.layout.task(task.id), task, changeNote('create', task, who), audit);
    return true;
  } catch (err) {
    if (err instanceof RecordExists) return false;
    throw err;
  }
}

/** Write the EU AI Act record of every task on the board that has none (at start); returns how many were written. */
export async function backfillRiskRecords(svc: TaskService): Promise<number> {
  const dir = svc.deps.layout.euAiActDir;
  const names = await readdir(dir).catch(() => [] as string[]);
  // Temp files of a server SIGKILLed mid-write; we hold the server lock, so they are dead.
  await Promise.all(names.filter((f) => f.endsWith('.tmp')).map((f) => rm(join(dir, f), { force: true })));
  const have = new Set(names.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)));
  const missing = svc.board.all().filter((t) => !have.has(t.id));
  // 64 at a time, so an old board's records share journal datasyncs instead of paying one each.
  for (let i = 0; i < missing.length; i += 64) {
    await Promise.all(missing.slice(i, i + 64).map((t) => svc.deps.store.writeJson(svc.deps.layout.euAiAct(t.id), classifyTask(t), `eu_ai_act ${t.id}`)));
  }
  return missing.length;
}
