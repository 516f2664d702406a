import { access, mkdir, readFile, unlink } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import { createExclusive, stableStringify, storageError, writeFileAtomic, type Faults, type WriteOptions } from './io.ts';
import { createJournal, type JournalOptions } from './journal.ts';
import { createJsonlAppender, readJsonl } from './jsonl.ts';
import { createPublisher } from './publisher.ts';
import { isCommitted, relToSdd, type SddLayout } from './layout.ts';
import { RecordExists, RecordMissing, VersionConflict, type Hold, type Note, type RecordStore, type StateCommitter, type UpdateOptions, type Versioned } from './types.ts';

type Audit = Record<string, unknown>;
const noHold: Hold = { release: () => undefined, abandon: () => undefined, extend: () => noHold };

export interface RecordStoreOptions {
  layout: SddLayout;
  /**
   * Receives `touch(abs, note)` for every write to a committed path. With `flush` (owned stores), a
   * checkpoint commits journaled deletes before it drops their journal: a delete must reach the ref
   * from the journal or the commit, never be undone by a restore at the next start.
   */
  committer: Pick<StateCommitter, 'touch'> & Partial<Pick<StateCommitter, 'flush'>>;
  log: Logger;
  /** proper-lockfile `stale` (ms); one value for every process (default 10000). */
  lockStaleMs?: number;
  /** Disk-trouble hooks for tests. */
  faults?: Faults;
  /** Journal tuning and test hooks (checkpoint size and interval, syncfs, handle wrapper). */
  journal?: Omit<JournalOptions, 'layout' | 'log'>;
  /** Tests: runs after a write's journal line is on disk, before the file itself is written. */
  afterJournal?(abs: string): Promise<void> | void;
  /**
   * This process is the only writer of `.sdd` (it holds the server lock): compare-and-set needs no file
   * lock, and a write is acknowledged once its journal line is on disk; the file follows behind
   * (publisher.ts). Without it every write holds the record's proper-lockfile lock until its file is
   * replaced, which lets several processes share a tree.
   */
  exclusive?: boolean;
}

/** A RecordStore that also closes its open JSONL handles and checkpoints its journal. */
export interface ClosableRecordStore extends RecordStore {
  close(): Promise<void>;
  /** Acknowledged writes whose file is still to be written (owned stores; 0 otherwise). */
  readonly backlog: number;
  /** Journal bytes no checkpoint has made durable in their files yet. */
  readonly journalBytes: number;
}

// Fast retries: the library default backoff (minTimeout 1000 ms) turns contention into seconds.
const LOCK_RETRIES = { retries: 200, minTimeout: 2, maxTimeout: 50, factor: 1.5, randomize: true };

/** The JSON/JSONL store under `.sdd`: atomic writes, CAS updates under file locks, commit marks. */
export function createRecordStore(opts: RecordStoreOptions): ClosableRecordStore {
  const { layout, committer, log, faults } = opts;
  const stale = opts.lockStaleMs ?? 10_000;
  const local = new KeyedMutex();
  const jsonl = createJsonlAppender({ faults });
  // Owned (exclusive): the journal line is the write, so disk trouble is injected there; the publisher
  // retries a file it could not write. Shared: the journal gets no `faults`, the disk suite injects into
  // the record's temp file (nothing journaled yet); journal faults come from `opts.journal.faults`.
  const publisher = opts.exclusive ? createPublisher({ log, faults }) : undefined;
  const inflight = new Set<Promise<void>>();
  // Set when a hold was abandoned (its audit entry never reached the log): journals stay for the next start.
  let keepJournals = false;
  // A delete was journaled since the last checkpoint: the checkpoint commits it before dropping the journal.
  let deletes = false;
  const commitDeletes = async (): Promise<boolean> => {
    if (!deletes || !committer.flush) return true;
    deletes = false;
    try {
      await committer.flush();
      return true;
    } catch (err) {
      deletes = true;
      log.warn('journal kept: a delete is not committed yet', { err: (err as Error).message });
      return false;
    }
  };
  const journal = createJournal({
    ...opts.journal, layout, log,
    ...(publisher ? { faults: opts.journal?.faults ?? faults, owner: { settle: async () => { await Promise.allSettled([...inflight]); await publisher.flush(); return (await commitDeletes()) && !keepJournals; } } } : {}),
  });

  // Group commit: the new text goes durably into the journal (one datasync shared by every concurrent
  // writer), then the file is replaced without fsync; checkpoints make the files durable. Only committed
  // paths are journaled: runtime files (batch intents, agent records) are also deleted with a plain rm
  // elsewhere, which a replay would undo, so they keep the fully durable write.
  const journaled = (abs: string) => abs.startsWith(layout.sdd + '/') && isCommitted(relToSdd(layout, abs));
  const owned = (abs: string) => publisher !== undefined && journaled(abs);
  const via = (abs: string, text: string | null, audit?: Audit): WriteOptions => {
    if (!journaled(abs)) return {};
    return { durable: false, beforePublish: async () => { await journal.append(relToSdd(layout, abs), text, audit); await opts.afterJournal?.(abs); } };
  };

  // Owned writes: acknowledged once the journal lines are on disk; the publisher writes the files behind.
  // `then` runs inside the write, before a checkpoint can see it finished (a delete's touch).
  const journalOwned = (abs: string, text: string | null, audit?: Audit, then?: () => void) => journalAllOwned([[abs, text, audit]], then);
  const journalAllOwned = async (writes: readonly (readonly [abs: string, text: string | null, audit?: Audit])[], then?: () => void) => {
    const done = (async () => {
      await journal.appendAll(writes.map(([abs, text, audit]) => [relToSdd(layout, abs), text, audit] as const));
      for (const [abs] of writes) await opts.afterJournal?.(abs);
      for (const [abs, text] of writes) publisher!.put(abs, text);
      if (writes.some(([, text]) => text === null)) deletes = true;
      then?.();
    })();
    inflight.add(done);
    try {
      await done;
    } finally {
      inflight.delete(done);
    }
    await publisher!.room();
  };

  // The text of a record as this process last wrote it: a file waiting for the publisher comes first.
  // Owned records are read synchronously: a few-KiB file in the page cache costs microseconds, where
  // open/stat/read/close through the thread pool queue behind the journal's and audit's datasyncs.
  const readText = (abs: string): Promise<string | undefined> => {
    if (!publisher) return readTextFile(abs);
    const waiting = publisher.peek(abs);
    if (waiting !== undefined) return Promise.resolve(waiting ?? undefined);
    try {
      return Promise.resolve(readFileSync(abs, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve(undefined);
      return Promise.reject(err);
    }
  };
  // Owned: paths being created right now count as present, so two creates of one path cannot both pass.
  const creating = new Set<string>();
  const present = (abs: string): boolean => {
    if (creating.has(abs)) return true;
    const waiting = publisher!.peek(abs);
    return waiting !== undefined ? waiting !== null : existsSync(abs);
  };

  const touch = (abs: string, note: Note | undefined, text: string | null) => {
    if (journaled(abs)) committer.touch(abs, note, text);
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

  // Shared journaled writes hold the record lock: one order per path across processes, and a checkpoint
  // can tell a write in flight (lock held) from a finished one. Owned and runtime paths take the mutex.
  const guard = <T>(abs: string, fn: () => Promise<T>, mode: 'existing' | 'any') =>
    journaled(abs) && !publisher ? withLock(abs, fn, mode) : local.run(abs, fn);

  const replace = (abs: string, text: string, audit?: Audit) =>
    owned(abs) ? journalOwned(abs, text, audit) : writeFileAtomic(abs, text, faults, via(abs, text, audit));

  // Compare-and-set: under the record lock in a shared tree (any path), under the mutex when owned.
  const update = <T extends Versioned>(abs: string, mutate: (current: T) => T, o: UpdateOptions = {}) =>
    (publisher ? local.run.bind(local) : withLock)(abs, async () => {
      const before = await readText(abs);
      if (before === undefined) throw new RecordMissing(abs);
      const current = JSON.parse(before) as T;
      if (o.expectedVersion !== undefined && current.version !== o.expectedVersion) {
        throw new VersionConflict<T>(abs, o.expectedVersion, current);
      }
      // mutate gets its own copy, so a throw halfway leaves nothing behind.
      const next = { ...mutate(structuredClone(current)), version: current.version + 1 } as T;
      const text = stableStringify(next);
      await replace(abs, text, o.audit?.(next));
      touch(abs, o.note, text);
      return next;
    });

  return {
    async readJson<T>(abs: string) {
      const text = await readText(abs);
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },
    readText,
    // Under the record lock, so no update of this path can journal between our link and our line;
    // link goes first (it alone decides RecordExists), so a create that fails is never journaled.
    create: <T extends Versioned>(abs: string, value: T, note?: Note, audit?: Audit) =>
      guard(abs, async () => {
        const text = stableStringify(value);
        if (!owned(abs)) await createExclusive(abs, text, faults, via(abs, text, audit));
        else if (present(abs)) throw new RecordExists(abs);
        else {
          creating.add(abs);
          try { await journalOwned(abs, text, audit); } finally { creating.delete(abs); }
        }
        touch(abs, note, text);
        return value;
      }, 'any'),
    update,
    // Owned stores only: every file in one journal write, so a failing disk leaves none of them.
    createAll: publisher && (async <T extends Versioned>(items: readonly { abs: string; value: T; note?: Note; audit?: Audit }[]) => {
      if (!items.every((i) => owned(i.abs))) throw new Error('createAll: only for committed paths');
      const taken = items.find((i) => present(i.abs));
      if (taken) throw new RecordExists(taken.abs);
      const texts = items.map((i) => stableStringify(i.value));
      for (const i of items) creating.add(i.abs);
      try {
        await journalAllOwned(items.map((i, k) => [i.abs, texts[k]!, i.audit] as const));
      } finally {
        for (const i of items) creating.delete(i.abs);
      }
      items.forEach((i, k) => touch(i.abs, i.note, texts[k]!));
    }),
    writeJson: (abs, value, note) =>
      guard(abs, async () => {
        const text = stableStringify(value);
        await replace(abs, text);
        touch(abs, note, text);
      }, 'any'),
    async appendJsonl(abs, value, note) {
      await jsonl.append(abs, value);
      if (journaled(abs)) committer.touch(abs, note);
    },
    readJsonl,
    // Owned: the touch runs inside the journaled write, so a checkpoint commits the delete before dropping its journal.
    remove: (abs, note) =>
      guard(abs, async () => {
        if (owned(abs)) {
          if (present(abs)) await journalOwned(abs, null, undefined, () => touch(abs, note, null));
          return;
        }
        try {
          await via(abs, null).beforePublish?.();
          await unlink(abs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw storageError(err, abs);
        }
        touch(abs, note, null);
      }, 'existing').catch((err) => { if (!(err instanceof RecordMissing)) throw err; }),
    // Owned: a hold is one more promise the checkpoint's settle waits for before it drops journals.
    hold() {
      if (!publisher) return noHold;
      let release!: () => void;
      const held = new Promise<void>((r) => { release = r; });
      inflight.add(held);
      let count = 0;
      const part = (): Hold => {
        count++;
        let done = false;
        const end = () => {
          if (done) return false;
          done = true;
          if (--count > 0) return false;
          inflight.delete(held);
          release();
          return true;
        };
        return { release: () => { end(); }, abandon: () => { keepJournals = true; end(); }, extend: part };
      };
      return part();
    },
    get backlog() {
      return publisher?.backlog ?? 0;
    },
    get journalBytes() {
      return journal.pendingBytes;
    },
    async close() {
      await jsonl.close();
      await publisher?.close();
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
  const text = await readTextFile(abs);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

async function readTextFile(abs: string): Promise<string | undefined> {
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
