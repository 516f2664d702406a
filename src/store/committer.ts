import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Git } from './git-cli.ts';
import { isLargeLog, repack, runGc } from './git-upkeep.ts';
import { isCommitted, relToSdd, STATE_REF, type SddLayout } from './layout.ts';
import { recoverMessage } from './message.ts';
import { markCleanStop } from './clean-stop.ts';
import { startDiff } from './recover.ts';
import { restOfStart } from './start-rest.ts';
import { createStateWriter, type Batch, type StateWriterOptions } from './state-writer.ts';
import type { CommitResult, Note, RecoverOptions, RecoverResult, StateCommitter } from './types.ts';

export interface CommitterOptions {
  layout: SddLayout;
  git: Git;
  log: Logger;
  clock: Clock;
  /** Group-commit interval while dirty (config state.commit_interval_ms, default 250). */
  intervalMs: number;
  /** Run `git gc --auto` in the background every N commits; 0 = never. */
  gcEveryCommits: number;
  /** The longest wait a slow commit imposes on the next timed one (default 10 s). */
  paceMaxMs?: number;
  /** Told after every commit that moved the ref (the /state.git mirror follows it). */
  onCommit?(result: CommitResult): void;
  /** Told of every attempt to commit and how long it took (observe's state commit metrics). */
  onAttempt?: StateWriterOptions['onAttempt'];
}

// Notes kept for one message; later ones are dropped (a long-stuck disk must not grow memory).
const MAX_KEPT_NOTES = 1000;
// Every commit is a small packfile (fast-import): combine them geometrically this often, so the
// number of packs stays logarithmic and the occasional full gc has little to do.
const REPACK_EVERY_COMMITS = 32;
// A commit re-reads every changed file whole (git stores whole blobs): the day's audit segment and the
// archive grow all day, so commits get slower as they grow. The next timed commit waits this many times
// the last one's duration (at least the interval), never longer than `paceMaxMs` (10 s): one huge commit (a
// bulk import of 100k tasks) is no measure of the next, and the ref must not trail the board for minutes.
const PACE = 3;
// While changes keep coming, large append-only files (the day's audit segment, the archive: each costs
// its whole size per commit) join a timed commit at most this often; the task files go every interval.
const BIG_EVERY_MS = 5000;

/** The group committer of `.sdd` into refs/sdd/state. Creating it does no IO; call `recover()` then `start()`. */
export function createCommitter(opts: CommitterOptions): StateCommitter {
  const { layout, git, log, intervalMs, gcEveryCommits } = opts;
  // A writer that writes files behind (the owned store) says what it still holds: commits read through it.
  let pending: ((abs: string) => string | null | undefined) | undefined;
  const writer = createStateWriter({ ...opts, pending: (abs) => pending?.(abs) });
  let dirty = new Set<string>();
  let inFlight = 0; // paths of the commit running now: not in the ref yet either
  let notes: Note[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  let queued: Promise<CommitResult | null> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let started = false;
  let commits = 0, lastMs = 0;
  let gc: Promise<void> | null = null;
  // What the recover compared and left for after the start: once every file was, a clean stop may vouch for the tree.
  const later = restOfStart(layout, log);

  // Every commit runs here, one at a time: the in-memory tree has one writer.
  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn);
    chain = p.catch(() => undefined);
    return p;
  };

  const runBatch = async (batch: Batch): Promise<CommitResult | null> => {
    const result = await writer.commit(batch);
    if (result) {
      commits++;
      opts.onCommit?.(result);
    }
    // The long-lived fast-import starts again after a repack or gc: it must read the packs they left.
    if (result && commits % REPACK_EVERY_COMMITS === 0) void enqueue(async () => { await writer.recycle(); await repack(git, log); });
    if (result && gcEveryCommits > 0 && commits % gcEveryCommits === 0 && !gc) {
      gc = runGc(git, log).finally(() => { gc = null; void enqueue(() => writer.recycle()); });
    }
    return result;
  };

  // Take the dirty set (`hold`: paths a timed commit leaves for later); on failure put it back so nothing
  // is lost. The batch holds paths only: each path's content is read as the commit streams it
  // (state-writer.ts), so a large backlog costs no memory.
  const commitDirty = async (hold: (rel: string) => boolean = () => false): Promise<CommitResult | null> => {
    const kept = [...dirty].filter(hold);
    if (kept.length === dirty.size) return null;
    const batch = { paths: [...dirty].filter((p) => !hold(p)).sort(), notes };
    dirty = new Set(kept);
    notes = [];
    inFlight = batch.paths.length;
    try {
      return await runBatch(batch);
    } catch (err) {
      for (const p of batch.paths) dirty.add(p);
      notes = [...batch.notes, ...notes].slice(0, MAX_KEPT_NOTES);
      throw err;
    } finally {
      inFlight = 0;
    }
  };

  // A flush asked for while another waits to start shares it: it covers every touch before both.
  const flush = (): Promise<CommitResult | null> => {
    if (queued) return queued;
    const p = enqueue(() => {
      queued = null;
      bigAt = opts.clock.now();
      return commitDirty();
    });
    queued = p;
    return p;
  };

  // A timed commit while changes keep coming leaves large append-only files out until BIG_EVERY_MS passed;
  // once the board is quiet for an interval they go too.
  let bigAt = 0;
  let touchedAt = 0;
  const timed = (): Promise<CommitResult | null> => enqueue(() => {
    const now = opts.clock.now();
    const busy = now - touchedAt < intervalMs && now - bigAt < BIG_EVERY_MS;
    if (!busy) bigAt = now;
    return commitDirty(busy ? (rel) => isLargeLog(join(layout.sdd, rel)) : undefined);
  });

  const schedule = () => {
    if (!started || timer || !dirty.size) return;
    timer = setTimeout(() => {
      const t0 = opts.clock.now();
      timed()
        .catch((err: Error) => log.error('state commit failed; will retry', { err: err.message }))
        .finally(() => {
          lastMs = opts.clock.now() - t0;
          timer = null;
          schedule();
        });
    }, Math.max(intervalMs, Math.min(PACE * lastMs, opts.paceMaxMs ?? 10_000)));
    timer.unref();
  };

  // Commit what differs between the files and the ref. A path the ref holds and the disk lacks is
  // deleted only when a journaled delete removed it (`deletions`); any other is kept (restore.ts
  // writes those back before this runs), so a start never drops tasks from the ref.
  const recover = (o: RecoverOptions = {}) =>
    enqueue(async (): Promise<RecoverResult> => {
      const head = await writer.reload();
      const { changed, deletions, report, snapshot, rest } = await startDiff(layout, git, head, o, log);
      o.onSnapshot?.(snapshot);
      let commit: CommitResult | null = null;
      if (changed.size || deletions.length) {
        // One git process writes all changed blobs: at first start that may be every file.
        const known = new Map<string, string | null>(await writer.writeBlobs([...changed.keys()]));
        for (const p of deletions) known.set(p, null);
        commit = await runBatch({ paths: [...known.keys()].sort(), notes: [], known, message: recoverMessage(report) });
        if (commit) log.debug(commit.message);
      }
      later.leave(head, rest);
      return { commit, report, rest };
    });

  const touch = (abs: string, note?: Note) => {
    const rel = abs.startsWith(layout.sdd + '/') ? relToSdd(layout, abs) : null;
    if (rel === null || !isCommitted(rel)) return;
    dirty.add(rel);
    touchedAt = opts.clock.now();
    if (note && notes.length < MAX_KEPT_NOTES) notes.push(note);
    schedule();
  };

  return {
    touch,
    readThrough(fn) {
      pending = fn;
    },
    flush,
    recover,
    start() {
      started = true;
      schedule();
    },
    finishStart: () => later.begin(touch),
    compared: later.compared,
    async stop() {
      started = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await later.settled();
      await flush();
      await gc;
      await enqueue(() => writer.recycle());
      if (later.whole && !dirty.size) await markCleanStop(layout, await writer.readRef(), log);
    },
    head: () => writer.readRef(),
    get pending() {
      return dirty.size + inFlight;
    },
  };
}
