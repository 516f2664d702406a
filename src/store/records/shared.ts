// The store of a tree several processes may share (tools, tests): compare-and-set under the record's
// proper-lockfile lock, every write durable on its own (temp, fsync, rename), effects right after it.
import { access, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../../lib/log.ts';
import { KeyedMutex } from '../../lib/mutex.ts';
import { createAppenders } from '../appenders.ts';
import { createExclusive, writeFileAtomic } from '../atomic.ts';
import { isMissing, storageError, type Faults } from '../disk.ts';
import { readJsonl, scanJsonlBackwards } from '../jsonl.ts';
import { isCommitted, relToSdd, type SddLayout } from '../layout.ts';
import { RecordMissing, type AuditAppender, type ClosableRecordStore, type Effects, type Note, type StateCommitter, type UpdateOptions, type Versioned, type WriteOptions } from '../types.ts';
import { auditsOf, casStep, stableStringify, writeOptions } from './cas.ts';

export interface SharedStoreOptions {
  layout: SddLayout;
  /** Receives `touch(abs, note)` for every write to a committed path (after the file has it). */
  committer: Pick<StateCommitter, 'touch'>;
  log: Logger;
  /** proper-lockfile `stale` (ms); one value for every process (default 10000). */
  lockStaleMs?: number;
  faults?: Faults;
  /** Signs and appends audit entries (observe's AuditLog); a write that carries one needs it. */
  audit?: AuditAppender;
}

// Fast retries: the library default backoff (minTimeout 1000 ms) turns contention into seconds.
const LOCK_RETRIES = { retries: 200, minTimeout: 2, maxTimeout: 50, factor: 1.5, randomize: true };

/** The shared-tree RecordStore: safe with other processes writing the same `.sdd`. */
export function createRecordStore(o: SharedStoreOptions): ClosableRecordStore {
  const { layout, committer, log, faults } = o;
  const local = new KeyedMutex();
  const appenders = createAppenders({ faults });
  const touch = (abs: string, note?: Note) => {
    if (abs.startsWith(layout.sdd + '/') && isCommitted(relToSdd(layout, abs))) committer.touch(abs, note);
  };

  // proper-lockfile does not queue inside one process, so the per-path mutex goes first.
  const withLock = <T>(abs: string, fn: () => Promise<T>) =>
    local.run(abs, async () => {
      if (!(await exists(abs))) throw new RecordMissing(abs); // the library would retry a missing folder for seconds
      let release: () => Promise<void>;
      try {
        release = await lockfile.lock(abs, {
          realpath: false, lockfilePath: `${abs}.lock`, stale: o.lockStaleMs ?? 10_000, retries: LOCK_RETRIES,
          onCompromised: (err) => log.error('record lock compromised', { path: abs, err: err.message }),
        });
      } catch (err) {
        if (isMissing(err)) throw new RecordMissing(abs);
        throw storageError(err, abs);
      }
      try {
        return await fn();
      } finally {
        await release().catch((err: Error) => log.warn('record lock release failed', { path: abs, err: err.message }));
      }
    });

  // After the record: lines, deletions, then the audit record (one durable append each).
  const apply = async (effects: Effects | undefined, note?: Note) => {
    if (!effects) return;
    for (const a of effects.appends ?? []) {
      await appenders.append(a.abs, JSON.stringify(a.value));
      touch(a.abs, a.note ?? note);
    }
    for (const abs of effects.removes ?? []) await unlink(abs).catch((err: unknown) => { if (!isMissing(err)) throw storageError(err, abs); });
    for (const entry of auditsOf(effects)) {
      if (!o.audit) throw new Error('store: a write carries an audit entry but no audit log was given');
      await o.audit.append(entry);
    }
  };

  const create = async <T extends Versioned>(abs: string, value: T, o?: Note | WriteOptions) => {
    const w = writeOptions(o);
    const text = stableStringify(value);
    await local.run(abs, () => createExclusive(abs, text, { faults }));
    touch(abs, w.note);
    await apply(w.effects, w.note);
    return value;
  };

  const remove = async (abs: string, note?: Note) => {
    try {
      await withLock(abs, () => unlink(abs));
    } catch (err) {
      if (err instanceof RecordMissing || isMissing(err)) return;
      throw storageError(err, abs);
    }
    touch(abs, note);
  };

  return {
    async readJson<T>(abs: string) {
      const text = await readText(abs);
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },
    readText,
    async readFolder(dir) {
      const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
      const texts = await Promise.all(names.map(async (n) => [n, await readText(join(dir, n))] as const));
      return texts.filter((x): x is readonly [string, string] => x[1] !== undefined).map(([n, t]) => [n, t]);
    },
    readJsonl,
    scanJsonl: (abs, visit) => scanJsonlBackwards(abs, visit),
    create,
    // One by one; a failure takes back the files already created (best effort: tools and tests only).
    async createAll(items) {
      const made: string[] = [];
      try {
        for (const i of items) { await create(i.abs, i.value, i); made.push(i.abs); }
      } catch (err) {
        for (const abs of made) await remove(abs).catch(() => undefined);
        throw err;
      }
    },
    async update<T extends Versioned>(abs: string, mutate: (current: T) => T, u: UpdateOptions<T> = {}) {
      const { next } = await withLock(abs, async () => {
        const step = casStep<T>(abs, await readText(abs), mutate, u.expectedVersion);
        await writeFileAtomic(abs, step.record.text, { faults });
        u.written?.(step.next);
        return step;
      });
      touch(abs, u.note);
      await apply(u.effects?.(next), u.note);
      u.queued?.(); // each write is durable on its own here: nothing to share
      return next;
    },
    async writeJson(abs, value, note) {
      const text = stableStringify(value);
      await local.run(abs, () => writeFileAtomic(abs, text, { faults }));
      touch(abs, note);
    },
    appendJsonl: (abs, value, note) => apply({ appends: [{ abs, value }] }, note),
    emit: apply,
    remove,
    backlog: 0,
    journalBytes: 0,
    close: () => appenders.close(),
  };
}

async function exists(abs: string): Promise<boolean> {
  return access(abs).then(() => true, () => false);
}

// Text of a file, undefined when absent.
async function readText(abs: string): Promise<string | undefined> {
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}
