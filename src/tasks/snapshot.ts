// The board's snapshot (store/snapshot.ts): written at a stop, loaded by the next start in place of reading
// every task file. The start's comparison with refs/sdd/state says which records still match their files;
// the others, and the files the snapshot lacks, are read as without it.
import { isValidId } from '../store/ids.ts';
import { relToSdd, type SddLayout } from '../store/layout.ts';
import { readSnapshotRecords, writeSnapshot } from '../store/snapshot.ts';
import type { SnapshotVerdict } from '../store/snapshot-judge.ts';
import type { RecordStore } from '../store/types.ts';
import type { Logger } from '../lib/log.ts';
import type { Board } from './board.ts';
import type { Task } from './schema.ts';

/** A snapshot to load the board from, and the start's verdict on it (null: load without). */
export interface BoardSnapshot {
  file: string;
  verdict: Promise<SnapshotVerdict | null>;
}

const PREFIX = 'tasks/';

/** Write every task of the board (creation order, so the next load keeps it without a sort) to `file`. */
export function saveBoard(layout: SddLayout, file: string, tasks: readonly Task[]): Promise<number> {
  return writeSnapshot(file, PREFIX, tasks.map((t) => [relToSdd(layout, layout.task(t.id)), t] as const));
}

/**
 * Load the board from the snapshot while the start compares the files (ready queues and all), then take
 * the verdict: when every record still matches its file, done; when some changed or are gone, or files
 * the snapshot lacks appeared, the board is loaded again from the records still vouched for and those
 * files. How many tasks came from the snapshot; null, with an empty board, when the snapshot is absent,
 * unreadable or not vouched for: the caller reads every folder.
 */
export async function loadFromSnapshot(deps: SnapshotDeps, snap: BoardSnapshot, target: BoardTarget): Promise<number | null> {
  const records = readSnapshotRecords<Task>(snap.file);
  if ('reason' in records) {
    if (records.reason !== 'absent') deps.log.warn(`board snapshot not used (${records.reason}): reading every task file`);
    return null;
  }
  await target.board().load(async (put) => { for (const t of records.values) put(target.prepare(t)); });
  const verdict = await snap.verdict;
  if (!verdict || verdict.stamp !== records.stamp || records.prefix !== PREFIX) {
    deps.log.warn('board snapshot not used (the start could not compare it with the files): reading every task file');
    target.fresh();
    return null;
  }
  // Only task files count: the folder's `.keep` (every workspace has one) or a note beside the shards is not read.
  const toRead = verdict.read.filter(isTaskPath);
  if (!verdict.stale.length && !toRead.length) return records.values.length;
  const stale = new Set(verdict.stale.map(idOf));
  const read: Task[] = [];
  for (const rel of toRead) {
    const t = await readTask(deps, rel);
    if (t) read.push(t);
  }
  deps.log.info(`board snapshot: ${stale.size} task(s) changed or gone since the stop, ${read.length} read from their files; the board is loaded again`);
  await target.fresh().load(async (put) => {
    for (const t of records.values) if (!stale.has(t.id)) put(target.prepare(t));
    for (const t of read) put(target.prepare(t)); // a changed task: its file's record replaces the snapshot's
  });
  return records.values.length - stale.size;
}

/** The board a snapshot is loaded into: `fresh` replaces it with an empty one (a load that starts over). */
export interface BoardTarget {
  board(): Board;
  fresh(): Board;
  /** A record as the board keeps it (upgraded, compact). */
  prepare(t: Task): Task;
}

export interface SnapshotDeps { layout: SddLayout; store: Pick<RecordStore, 'readText'>; log: Logger }

// A task's file as a folder read takes it: `tasks/<shard>/<id>.json`.
const isTaskPath = (rel: string): boolean => rel.split('/').length === 3 && rel.endsWith('.json') && isValidId(idOf(rel));

// A file the verdict says to read (a task path), unreadable skipped.
async function readTask(deps: SnapshotDeps, rel: string): Promise<Task | undefined> {
  const text = await deps.store.readText(`${deps.layout.sdd}/${rel}`).catch(() => undefined);
  try {
    return text === undefined ? undefined : (JSON.parse(text) as Task);
  } catch {
    return undefined; // as a torn JSONL line
  }
}

const idOf = (rel: string): string => rel.slice(rel.lastIndexOf('/') + 1, -'.json'.length);
