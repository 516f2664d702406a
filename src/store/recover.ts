import { readFileSync, rmSync, statSync } from 'node:fs';
import type { Logger } from '../lib/log.ts';
import { readCleanStop, unchangedSince, type CleanStop } from './clean-stop.ts';
import { blobId } from './git-objects.ts';
import type { Git } from './git-cli.ts';
import type { RecoverOptions, StartReport } from './committer-types.ts';
import { isCommitted, isTaskFile, relToSdd, STATE_REF, type SddLayout } from './layout.ts';
import { parseLsTree, restoreMissing, sddPathsExcept, topLevelArgs, type RefBlob, type RestoreResult } from './restore.ts';
import { walkSdd, type FileStamps } from './sdd-walk.ts';
import { readSnapshotIndex, readSnapshotTrees } from './snapshot.ts';
import { refJudge, sameFolders, snapshotJudge, type SnapshotJudge, type SnapshotVerdict } from './snapshot-judge.ts';
import { earlyMatches, largeBoard, scanOnThread } from './start-scan.ts';
import { nextTurn } from '../lib/timers.ts';

export type { RefBlob } from './restore.ts';

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
  /** A folder (relative to `.sdd`) not compared: left for after the start (RecoverOptions.later). */
  rest: string | null;
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
  return { changed, deletions, report, snapshot, rest: scan.rest };
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
 * With `split` (a large board), the flat EU AI Act folder (a record per task) is compared on a thread of its
 * own meanwhile: its half of the ref listed, walked, stat'ed, restored, compared; or, with `later` after a clean
 * stop at `head` and no journaled delete in it, not at all: it is the StartScan's `rest`. `under`: that folder only.
 */
export async function scanForStart(layout: SddLayout, git: Git, head: string | null, o: Pick<RecoverOptions, 'deletions' | 'restore' | 'onRestored' | 'snapshot' | 'later'> & { split?: boolean; under?: string }): Promise<StartScan> {
  const clean = readCleanStop(layout.stateClean, head);
  const aside = o.split ? relToSdd(layout, layout.euAiActDir) : undefined;
  const rest = aside && o.later && clean && ![...(o.deletions ?? [])].some((d) => d.startsWith(`${aside}/`)) ? aside : null;
  const part = aside && !rest ? scanOnThread(layout, head, { restore: o.restore, deletions: o.deletions, under: aside }) : null;
  part?.restored.catch(() => undefined); // awaited below, as is the answer
  const trees = new Map<string, string>(); // the ref's folders (for the snapshot's judge)
  const listing = head ? listCommitted(git, head, { under: o.under, skip: aside, trees: o.snapshot ? trees : undefined }) : Promise.resolve(new Map<string, RefBlob>());
  const { files, stamps, litter } = await walkSdd(layout.sdd, { stat: clean !== null, roots: o.under ? [o.under] : undefined, skip: aside ? [aside] : undefined });
  const ref = await listing;
  const judge = o.snapshot ? snapshotFor(layout, o.snapshot, litter, ref, trees) : null;
  let restored: RestoreResult = { paths: [], tasks: 0, diskHadNoTasks: false };
  if (o.restore) {
    const lacking = missingFrom(ref, files);
    restored = restoreMissing(layout, lacking, files.some(isTaskFile), o.deletions);
    if (judge && restored.paths.length) {
      const oids = new Map(lacking.map((m) => [m.rel, m.oid]));
      for (const rel of restored.paths) judge.see(rel, oids.get(rel)!);
    }
    for (const rel of restored.paths) ref.delete(rel); // written from the ref: as it holds them
  }
  // Every file is there once the other thread has restored its folder too.
  const theirs = part ? await Promise.race([part.restored, part.scan.then((s) => s.restored.paths)]) : [];
  o.onRestored?.(theirs.length ? [...restored.paths, ...theirs] : restored.paths);
  const { changed, missing } = await diffWithRef(layout, ref, clean, files, judge?.see, stamps);
  const own: StartScan = { changed, missing, restored, snapshot: judge?.verdict() ?? null, rest };
  return part ? joinScans(own, await part.scan) : own;
}

// The comparison of the whole tree from this thread's and the other's (which holds no task file).
function joinScans(own: StartScan, other: StartScan): StartScan {
  for (const [rel, oid] of other.changed) own.changed.set(rel, oid);
  const restored = { ...own.restored, paths: own.restored.paths.concat(other.restored.paths) };
  return { ...own, missing: own.missing.concat(other.missing), restored };
}

// The judge of the snapshot the board loads from (null: unreadable, it loads without): by the ref's listing when
// the snapshot holds the ref's folders (`trees`), else by its index. Its prefix's folders are read by nobody else
// then: the temp files and lock folders a dead writer left in them are removed here.
function snapshotFor(layout: SddLayout, file: string, litter: readonly string[], ref: ReadonlyMap<string, RefBlob>, trees: ReadonlyMap<string, string>): SnapshotJudge | null {
  const head = readSnapshotTrees(file);
  if ('reason' in head) return null;
  for (const rel of litter) if (rel.startsWith(head.prefix)) rmSync(`${layout.sdd}/${rel}`, { recursive: true, force: true });
  if (head.trees && sameFolders(head.trees, trees, head.prefix)) return refJudge(head.stamp, head.prefix, new Set(Object.keys(head.trees)), ref);
  const snap = readSnapshotIndex(file);
  return 'reason' in snap || snap.stamp !== head.stamp ? null : snapshotJudge(snap);
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
    await nextTurn();
  }
}

// A stat from the walk as unchangedSince reads it (a file gone then has NaN: never vouched for, read, ENOENT).
const stampOf = (s: FileStamps, k: number) => ({ size: s.size[k]!, mtimeMs: s.changed[k]!, ctimeMs: s.changed[k]! });

/** The regular files under `.sdd` whose path is committed (relative to `.sdd`). */
export const listSddFiles = async (layout: SddLayout): Promise<string[]> => (await walkSdd(layout.sdd)).files;

/** Blobs under `.sdd/` in commit `head` (`under`: in that top-level folder only; `skip`: not in that one): path relative to `.sdd` → blob id and size; with `trees`, the folders' tree ids too. */
export async function listCommitted(git: Git, head: string, o: { under?: string; skip?: string; trees?: Map<string, string> } = {}): Promise<Map<string, RefBlob>> {
  const paths = o.under ? [`.sdd/${o.under}`] : o.skip ? sddPathsExcept((await git.run(topLevelArgs(head))).stdout, [o.skip]) : ['.sdd'];
  if (!paths.length) return new Map();
  const { stdout } = await git.run(['ls-tree', '-r', '-z', '-l', ...(o.trees ? ['-t'] : []), '--full-tree', head, '--', ...paths]);
  return parseLsTree(stdout, o.trees);
}
