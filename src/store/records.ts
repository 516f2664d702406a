import { access, readFile, unlink } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import { createExclusive, stableStringify, storageError, writeJsonAtomic, type Faults } from './io.ts';
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
}

/** A RecordStore that also closes its open JSONL handles. */
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

  const touch = (abs: string, note?: string) => {
    if (abs.startsWith(layout.sdd + '/') && isCommitted(relToSdd(layout, abs))) committer.touch(abs, note);
  };

  // proper-lockfile does not queue inside one process, so the per-path mutex goes first.
  const withLock = <T>(abs: string, fn: () => Promise<T>) =>
    local.run(abs, async () => {
      // proper-lockfile retries every error for seconds, a missing folder included: fail fast instead.
      if (!(await exists(abs))) throw new RecordMissing(abs);
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

  const update = <T extends Versioned>(abs: string, mutate: (current: T) => T, o: { expectedVersion?: number; note?: string } = {}) =>
    withLock(abs, async () => {
      const current = await readJsonFile<T>(abs);
      if (current === undefined) throw new RecordMissing(abs);
      if (o.expectedVersion !== undefined && current.version !== o.expectedVersion) {
        throw new VersionConflict<T>(abs, o.expectedVersion, current);
      }
      // mutate gets its own copy, so a throw halfway leaves nothing behind.
      const next = { ...mutate(structuredClone(current)), version: current.version + 1 } as T;
      await writeJsonAtomic(abs, next, faults);
      touch(abs, o.note);
      return next;
    });

  return {
    readJson: readJsonFile,
    async create<T extends Versioned>(abs: string, value: T, note?: string) {
      await createExclusive(abs, stableStringify(value), faults);
      touch(abs, note);
      return value;
    },
    update,
    writeJson: (abs, value, note) =>
      local.run(abs, async () => {
        await writeJsonAtomic(abs, value, faults);
        touch(abs, note);
      }),
    async appendJsonl(abs, value, note) {
      await jsonl.append(abs, value);
      touch(abs, note);
    },
    readJsonl,
    remove: (abs, note) =>
      local.run(abs, async () => {
        try {
          await unlink(abs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw storageError(err, abs);
        }
        touch(abs, note);
      }),
    close: () => jsonl.close(),
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
