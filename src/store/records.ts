import { access, mkdir, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import { createExclusive, stableStringify, storageError, writeFileAtomic, type Faults, type WriteOptions } from './io.ts';
import { createJournal, type JournalOptions } from './journal.ts';
import { createJsonlAppender, readJsonl } from './jsonl.ts';
import { isCommitted, relToSdd, type SddLayout } from './layout.ts';
import { RecordMissing, VersionConflict, type RecordStore, type StateCommitter, type Versioned } from './types.ts';

export interface RecordStoreOptions {
  layout: SddLayout;
  /** Receives `touch(abs, note)` for every write to a committed path. */
  committer: Pick<StateCommitter, 'touch'>;
  log: Logger;
  /** proper-lockfile `stale` (ms); one value for every process (default 10000). */
  lockStaleMs?: number;
  /** Disk-trouble hooks for tests. */
  faults?: Faults;
  /** Journal tuning and test hooks (checkpoint size and interval, syncfs, handle wrapper). */
  journal?: Omit<JournalOptions, 'layout' | 'log'>;
  /** Tests: runs after a write's journal line is on disk, before the file itself is written. */
  afterJournal?(abs: string): Promise<void> | void;
}

/** A RecordStore that also closes its open JSONL handles and checkpoints its journal. */
export interface ClosableRecordStore extends RecordStore {
  close(): Promise<void>;
}

// Fast retries: the library default backoff (minTimeout 1000 ms) turns contention into seconds.
const LOCK_RETRIES = { retries: 200, minTimeout: 2, maxTimeout: 50, factor: 1.5, randomize: true };

/** The JSON/JSONL store under `.sdd`: atomic writes, CAS updates under file locks, commit marks. */
export function createRecordStore(opts: RecordStoreOptions): ClosableRecordStore {
  const { layout, committer, log, faults } = opts;
  const stale = opts.lockStaleMs ?? 10_000;
  const local = new KeyedMutex();
  const jsonl = createJsonlAppender({ faults });
  // The journal gets no `faults`: the disk suite injects into the record's temp file (nothing journaled
  // yet); journal faults come from `opts.journal.faults` in tests of the journal itself.
  const journal = createJournal({ ...opts.journal, layout, log });

  // Group commit: the new text goes durably into the journal (one datasync shared by every concurrent
  // writer), then the file is replaced without fsync; checkpoints make the files durable. Only committed
  // paths are journaled: runtime files (batch intents, agent records) are also deleted with a plain rm
  // elsewhere, which a replay would undo, so they keep the fully durable write.
  const journaled = (abs: string) => abs.startsWith(layout.sdd + '/') && isCommitted(relToSdd(layout, abs));
  const via = (abs: string, text: string | null): WriteOptions => {
    if (!journaled(abs)) return {};
    return { durable: false, beforePublish: async () => { await journal.append(relToSdd(layout, abs), text); await opts.afterJournal?.(abs); } };
  };

  const touch = (abs: string, note?: string) => {
    if (journaled(abs)) committer.touch(abs, note);
  };

  // proper-lockfile does not queue inside one process, so the per-path mutex goes first.
  // `existing`: RecordMissing when absent; `any`: the folder is created for a new file.
  const withLock = <T>(abs: string, fn: () => Promise<T>, mode: 'existing' | 'any' = 'existing') =>
    local.run(abs, async () => {
      // proper-lockfile retries every error for seconds, a missing folder included: fail fast instead.
      if (mode === 'any') await mkdir(dirname(abs), { recursive: true }).catch((err) => { throw storageError(err, abs); });
      else if (!(await exists(abs))) throw new RecordMissing(abs);
      let release: () => Promise<void>;
      try {
        release = await lockfile.lock(abs, {
          realpath: false, lockfilePath: `${abs}.lock`, stale, retries: LOCK_RETRIES,
          onCompromised: (err) => log.error('record lock compromised', { path: abs, err: err.message }),
        });
      } catch (err) {
        // No folder to put the lock in means no record either.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RecordMissing(abs);
        throw storageError(err, abs);
      }
      try {
        return await fn();
      } finally {
        await release().catch((err: Error) => log.warn('record lock release failed', { path: abs, err: err.message }));
      }
    });

  // Journaled writes hold the record lock: one order per path across processes, and a checkpoint can
  // tell a write in flight (lock held) from a finished one. Other paths keep the per-process mutex.
  const guard = <T>(abs: string, fn: () => Promise<T>, mode: 'existing' | 'any') =>
    journaled(abs) ? withLock(abs, fn, mode) : local.run(abs, fn);

  const update = <T extends Versioned>(abs: string, mutate: (current: T) => T, o: { expectedVersion?: number; note?: string } = {}) =>
    withLock(abs, async () => {
      const current = await readJsonFile<T>(abs);
      if (current === undefined) throw new RecordMissing(abs);
      if (o.expectedVersion !== undefined && current.version !== o.expectedVersion) {
        throw new VersionConflict<T>(abs, o.expectedVersion, current);
      }
      // mutate gets its own copy, so a throw halfway leaves nothing behind.
      const next = { ...mutate(structuredClone(current)), version: current.version + 1 } as T;
      const text = stableStringify(next);
      await writeFileAtomic(abs, text, faults, via(abs, text));
      touch(abs, o.note);
      return next;
    });

  return {
    readJson: readJsonFile,
    // Under the record lock, so no update of this path can journal between our link and our line;
    // link goes first (it alone decides RecordExists), so a create that fails is never journaled.
    create: <T extends Versioned>(abs: string, value: T, note?: string) =>
      guard(abs, async () => {
        const text = stableStringify(value);
        await createExclusive(abs, text, faults, via(abs, text));
        touch(abs, note);
        return value;
      }, 'any'),
    update,
    writeJson: (abs, value, note) =>
      guard(abs, async () => {
        const text = stableStringify(value);
        await writeFileAtomic(abs, text, faults, via(abs, text));
        touch(abs, note);
      }, 'any'),
    async appendJsonl(abs, value, note) {
      await jsonl.append(abs, value);
      touch(abs, note);
    },
    readJsonl,
    remove: (abs, note) =>
      guard(abs, async () => {
        try {
          await via(abs, null).beforePublish?.();
          await unlink(abs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw storageError(err, abs);
        }
        touch(abs, note);
      }, 'existing').catch((err) => { if (!(err instanceof RecordMissing)) throw err; }),
    async close() {
      await jsonl.close();
      await journal.close();
    },
  };
}

async function exists(abs: string): Promise<boolean> {
  try {
    await access(abs);
    return true;
  } catch {
    return false;
  }
}

/** Parsed JSON of `abs`, or undefined when it does not exist. */
export async function readJsonFile<T>(abs: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as T;
}
