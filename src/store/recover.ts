import { readFileSync, rmSync, statSync, type Stats } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { blobId } from './git-objects.ts';
import type { Git } from './git-cli.ts';
import type { RecoverOptions, StartReport } from './committer-types.ts';
import { isCommitted, isTaskFile, relToSdd, STATE_REF, type SddLayout } from './layout.ts';
import { parseLsTree, restoreMissing, type RefBlob, type RestoreResult } from './restore.ts';
import { walkSdd, type FileStamps } from './sdd-walk.ts';
import { readSnapshotIndex, snapshotJudge, type SnapshotVerdict } from './snapshot.ts';
import { earlyMatches, largeBoard, scanOnThread } from './start-scan.ts';

export type { RefBlob } from './restore.ts';

/** A clean stop: `head` was committed after every file was written, at `at` (the marker's mtime, ms). */
export interface CleanStop { head: string; at: number }

// Timestamps come from the kernel's coarse clock and a clock may be set back a little: a file changed
// within this long before a clean stop is read again, never trusted.
const RACY_MS = 2000;

/**
 * A file is as the ref holds it, without reading it: the last stop was clean at the ref's head, the file
 * has the blob's size, and neither its content (mtime) nor its inode (ctime, which no tool can set back)
 * changed since. Any edit while the server was down moves one of them.
 */
export function unchangedSince(st: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs'>, blob: RefBlob | undefined, clean: CleanStop | null): boolean {
  return clean !== null && blob !== undefined && blob.size === st.size && Math.max(st.mtimeMs, st.ctimeMs) < clean.at - RACY_MS;
}

/** Committed files under `.sdd` on disk: path relative to `.sdd` → git blob id (read and hashed, or vouched for as below). */
export async function scanSdd(layout: SddLayout, trust: { ref: ReadonlyMap<string, RefBlob>; clean: CleanStop | null } = { ref: new Map(), clean: null }): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await eachBlob(layout, await listSddFiles(layout), trust.ref, trust.clean, null, (rel, oid) => { out.set(rel, oid); });
  return out;
}

/** What the comparison of the files with the ref found: changed paths (blob ids), the ref's blobs the disk lacks, what was restored. */
export interface StartScan {
  changed: Map<string, string>;
  missing: { rel: string; oid: string }[];
  restored: RestoreResult;
  /** The verdict on the board's snapshot (RecoverOptions.snapshot), null when there is none or it is unreadable. */
  snapshot: SnapshotVerdict | null;
}

/**
 * What a start finds (RecoverOptions): the ref's blobs the disk lacks written back first (`restore`, then
 * `onRestored`: the files are all there), then every file compared with the ref (`scanForStart`, on a thread
 * of its own for a large board: start-scan.ts): the changed paths with their blob ids, the journaled deletes
 * to commit, and the report.
 */
export async function startDiff(layout: SddLayout, git: Git, head: string | null, o: RecoverOptions, log: Logger) {
  const scan = await startScan(layout, git, head, o);
  const { changed, missing, snapshot } = scan;
  const before = o.restored ?? { paths: [], tasks: 0, diskHadNoTasks: false };
  const again = scan.restored;
  const restored = o.restore ? { paths: [...before.paths, ...again.paths], tasks: before.tasks + again.tasks, diskHadNoTasks: again.diskHadNoTasks } : before;
  const deletions = missing.filter((m) => o.deletions?.has(m.rel)).map((m) => m.rel);
  if (missing.length > deletions.length) log.warn(`${missing.length - deletions.length} path(s) of ${STATE_REF} are missing on disk; kept in the ref (a restart restores them)`);
  const report: StartReport = {
    first: !head && changed.size > 0, committed: [...changed.keys()].sort(), deleted: deletions,
    restoredTasks: restored.tasks, restoredOther: restored.paths.length - restored.tasks, fetched: restored.diskHadNoTasks && restored.tasks > 0,
  };
  return { changed, deletions, report, snapshot };
}

// The comparison begun early when it is the one asked for, else one on a thread for a large board, else here.
async function startScan(layout: SddLayout, git: Git, head: string | null, o: RecoverOptions): Promise<StartScan> {
  const early = o.early && earlyMatches(o.early, head, o) ? o.early : null;
  if (o.early && !early) await o.early.scan.catch(() => undefined); // not the one asked for: it restores nothing after this
  const threaded = early ?? ((o.thread ?? largeBoard(layout)) ? scanOnThread(layout, head, o) : null);
  if (!threaded) return scanForStart(layout, git, head, o);
  // The restored paths are told before the scan's answer is taken (promise order: attached first, run first).
  void threaded.restored.then((paths) => o.onRestored?.(paths));
  return threaded.scan;
}

/**
 * The comparison itself, on whichever thread calls it: the ref listed while the folders are, the missing
 * written back (`restore`, journaled `deletions` excepted), `onRestored`, then every file against the ref.
 */
export async function scanForStart(layout: SddLayout, git: Git, head: string | null, o: Pick<RecoverOptions, 'deletions' | 'restore' | 'onRestored' | 'snapshot'> & { split?: boolean }): Promise<StartScan> {
  const clean = readCleanStop(layout.stateClean, head);
  const listing = head ? listCommitted(git, head) : Promise.resolve(new Map<string, RefBlob>());
  // The files are walked and stat'ed (after a clean stop) while git lists the ref; with `split` (a large
  // board), the flat EU AI Act folder (a record per task) on a thread of its own meanwhile.
  const { files, stamps, litter } = await walkSdd(layout.sdd, { stat: clean !== null, aside: o.split ? [relToSdd(layout, layout.euAiActDir)] : [] });
  const ref = await listing;
  const judge = o.snapshot ? snapshotFor(layout, o.snapshot, litter) : null;
  let restored: RestoreResult = { paths: [], tasks: 0, diskHadNoTasks: false };
  if (o.restore) {
    const lacking = missingFrom(ref, files);
    restored = restoreMissing(layout, lacking, files.some(isTaskFile), o.deletions);
    for (const rel of restored.paths) ref.delete(rel); // written from the ref: as it holds them
    if (judge && restored.paths.length) {
      const oids = new Map(lacking.map((m) => [m.rel, m.oid]));
      for (const rel of restored.paths) judge.see(rel, oids.get(rel)!);
    }
  }
  o.onRestored?.(restored.paths);
  const { changed, missing } = await diffWithRef(layout, ref, clean, files, judge?.see, stamps);
  return { changed, missing, restored, snapshot: judge?.verdict() ?? null };
}

// The judge of the snapshot the board loads from (null: unreadable, it loads without). Its prefix's folders are
// read by nobody else then: the temp files and lock folders a dead writer left in them are removed here.
function snapshotFor(layout: SddLayout, file: string, litter: readonly string[]) {
  const snap = readSnapshotIndex(file);
  if ('reason' in snap) return null;
  for (const rel of litter) if (rel.startsWith(snap.prefix)) rmSync(`${layout.sdd}/${rel}`, { recursive: true, force: true });
  return snapshotJudge(snap);
}

// The ref's blobs not among `files` (one pass of lookups when none is missing, the usual case).
function missingFrom(ref: ReadonlyMap<string, RefBlob>, files: readonly string[]): { rel: string; oid: string }[] {
  let found = 0;
  for (const f of files) if (ref.has(f)) found++;
  if (found === ref.size) return [];
  const on = new Set(files);
  const out: { rel: string; oid: string }[] = [];
  for (const [rel, b] of ref) if (!on.has(rel)) out.push({ rel, oid: b.oid });
  return out;
}

/**
 * What differs between `files` on disk and the ref (`ref` is consumed: what is left in it is not on
 * disk): changed or new paths with their blob ids, and the ref's blobs the disk lacks. A file unchanged
 * since a clean stop at the ref's head (`unchangedSince`) takes the ref's id from a stat; the others are read.
 */
export async function diffWithRef(layout: SddLayout, ref: Map<string, RefBlob>, clean: CleanStop | null, files: readonly string[], seen?: (rel: string, oid: string) => void, stamps?: FileStamps | null) {
  const changed = new Map<string, string>();
  await eachBlob(layout, files, ref, clean, stamps ?? null, (rel, oid, blob) => {
    seen?.(rel, oid);
    if (blob?.oid !== oid) changed.set(rel, oid);
    ref.delete(rel);
  });
  const missing: { rel: string; oid: string }[] = [];
  for (const [rel, blob] of ref) if (isCommitted(rel)) missing.push({ rel, oid: blob.oid });
  return { changed, missing };
}

// Measured on 100k small files: readFileSync 0.6 s, callback readFile ×64 in flight 1.1 s,
// fs.promises.readFile 4.2 s, statSync 0.2–0.5 s. So: sync calls in small slices, yielding between.
// `stamps` are the files' stats taken by the walk; without them a file is stat'ed here.
async function eachBlob(layout: SddLayout, files: readonly string[], ref: ReadonlyMap<string, RefBlob>, clean: CleanStop | null, stamps: FileStamps | null, visit: (rel: string, oid: string, blob: RefBlob | undefined) => void, slice = 256) {
  for (let i = 0; i < files.length; i += slice) {
    for (let k = i; k < Math.min(i + slice, files.length); k++) {
      const rel = files[k]!;
      const abs = `${layout.sdd}/${rel}`; // rel comes from readdir: already normal
      const blob = ref.get(rel);
      try {
        visit(rel, clean && blob && unchangedSince(stamps ? stampOf(stamps, k) : statSync(abs), blob, clean) ? blob.oid : blobId(readFileSync(abs)), blob);
      } catch (err) {
        // Deleted while we looked: it is simply not on disk.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// A stat from the walk as unchangedSince reads it (a file gone then has NaN: never vouched for, read, ENOENT).
const stampOf = (s: FileStamps, k: number) => ({ size: s.size[k]!, mtimeMs: s.changed[k]!, ctimeMs: s.changed[k]! });

/** The regular files under `.sdd` whose path is committed (relative to `.sdd`). */
export const listSddFiles = async (layout: SddLayout): Promise<string[]> => (await walkSdd(layout.sdd)).files;

/** Blobs under `.sdd/` in commit `head`: path relative to `.sdd` → blob id and size. */
export async function listCommitted(git: Git, head: string): Promise<Map<string, RefBlob>> {
  const { stdout } = await git.run(['ls-tree', '-r', '-z', '-l', '--full-tree', head, '--', '.sdd']);
  return parseLsTree(stdout);
}

/** The clean stop recorded in `file` (its mtime is when), if it names `head`; else null (a crash, or the ref moved since). */
export function readCleanStop(file: string, head: string | null): CleanStop | null {
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { head?: unknown };
    return head !== null && c.head === head ? { head, at: statSync(file).mtimeMs } : null;
  } catch {
    return null;
  }
}

/**
 * Record a clean stop: every file this server wrote is in the ref at `head` and nothing writes any more.
 * The marker's own mtime (the file system's clock, as the files' times) says since when.
 */
export async function markCleanStop(layout: SddLayout, head: string | null, log: Logger): Promise<void> {
  if (!head) return;
  try {
    await mkdir(dirname(layout.stateClean), { recursive: true });
    await writeFile(layout.stateClean, JSON.stringify({ head }) + '\n');
  } catch (err) {
    log.warn('clean stop not recorded: the next start reads every file', { err: (err as Error).message });
  }
}
