import { runId } from './machine.ts';
import type { ProgressEntry, SnapshotEntry, Task, TaskProgressRequest } from './schema.ts';
import { changeNote } from './notes.ts';
import type { Actor, TaskService } from './service.ts';

type Line = (ProgressEntry & { kind: 'entry' }) | (SnapshotEntry & { kind: 'snapshot' });

// The run a progress line belongs to is the task's current claim, never chosen by the client.
const runIdOf = (t: Task): string | null => runId(t);

/**
 * Append a progress update (and a snapshot when counters are given). The first one starts a claimed
 * task: its lines are written with that change, so the start never stands without them.
 */
export async function reportProgress(svc: TaskService, id: string, body: TaskProgressRequest, who: Actor): Promise<Task> {
  const task = svc.visible(id, who.tenant);
  svc.fence(task, who);
  const file = svc.deps.layout.progress(id);
  const note = changeNote('progress', task, who);
  const lines = (t: Task) => progressLines(svc.deps.clock.iso(), runIdOf(t), body).map((value) => ({ abs: file, value, note }));
  if (task.status === 'claimed') {
    try {
      return await svc.apply(id, 'start', {}, who, { appends: lines });
    } catch (err) {
      // Concurrent first reports race to start the task; the losers find it in_progress, which is what they wanted.
      const cur = svc.board.get(id);
      if (cur?.status !== 'in_progress' || cur.claim_count !== task.claim_count) throw err;
      await svc.deps.store.emit({ appends: lines(cur) }, note);
      return cur;
    }
  }
  await svc.deps.store.emit({ appends: lines(task) }, note);
  return task;
}

// The lines of one report: an entry, and a snapshot when any counter is given.
function progressLines(ts: string, run_id: string | null, body: TaskProgressRequest): Line[] {
  const entry: Line = { kind: 'entry', ts, run_id, message: body.message ?? null, percent: body.percent ?? null };
  if (body.files_changed === undefined && body.tests_passing === undefined && body.errors === undefined) return [entry];
  return [entry, { kind: 'snapshot', ts, run_id, files_changed: body.files_changed ?? 0, tests_passing: body.tests_passing ?? 0, errors: body.errors ?? 0, last_file: body.last_file ?? null }];
}

/** Progress of the task's current run: last 50 entries, latest, the counter vector and whether it stalled. */
export async function readProgress(svc: TaskService, id: string, who: Actor) {
  const task = svc.visible(id, who.tenant);
  const run_id = runIdOf(task);
  const lines = (await svc.deps.store.readJsonl<Line>(svc.deps.layout.progress(id))).filter((l) => l.run_id === run_id);
  const entries = lines.filter((l) => l.kind === 'entry').map(strip);
  const snaps = lines.filter((l) => l.kind === 'snapshot').map(strip) as SnapshotEntry[];
  const first = snaps[0], last = snaps[snaps.length - 1];
  const vector = {
    files_changed: last && first ? last.files_changed - first.files_changed : 0,
    tests_passing: last && first ? last.tests_passing - first.tests_passing : 0,
    errors: last && first ? last.errors - first.errors : 0,
  };
  return { task_id: id, run_id, entries: entries.slice(-50), latest: last ?? null, vector, stalled: isStalled(snaps, svc.deps.config.orchestrator.stall_snapshots) };
}

/** What GET /tasks/{id}/progress answers. */
export type ProgressReport = Awaited<ReturnType<typeof readProgress>>;

/** Up to 10 snapshots of the task, oldest first. */
export async function readSnapshots(svc: TaskService, id: string, who: Actor): Promise<SnapshotEntry[]> {
  svc.visible(id, who.tenant);
  const lines = await svc.deps.store.readJsonl<Line>(svc.deps.layout.progress(id));
  return lines.filter((l) => l.kind === 'snapshot').map(strip).slice(-10) as SnapshotEntry[];
}

/** Stalled: the last `n` snapshots of a run show no change in any counter. */
export function isStalled(snaps: Pick<SnapshotEntry, 'files_changed' | 'tests_passing' | 'errors'>[], n: number): boolean {
  if (snaps.length < n) return false;
  const tail = snaps.slice(-n);
  const a = tail[0]!;
  return tail.every((s) => s.files_changed === a.files_changed && s.tests_passing === a.tests_passing && s.errors === a.errors);
}

function strip<T extends { kind: string }>(l: T): Omit<T, 'kind'> {
  const { kind: _k, ...rest } = l;
  return rest;
}
