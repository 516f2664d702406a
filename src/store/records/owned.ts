// The store of a tree this process owns (`svc up` holds the server lock): compare-and-set under an
// in-process mutex, a write acknowledged once its journal line (with its effects) is on disk, the files
// written behind (publisher.ts), reads answered from what waits before the files.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { Logger } from '../../lib/log.ts';
import { KeyedMutex } from '../../lib/mutex.ts';
import type { Timers } from '../../lib/timers.ts';
import { createAppenders } from '../appenders.ts';
import { writeFileAtomic } from '../atomic.ts';
import { isMissing, storageError, type Faults } from '../disk.ts';
import { createJournal, type JournalOp, type JournalOptions } from '../journal.ts';
import { parseJsonl, scanJsonlBackwards } from '../jsonl.ts';
import { isCommitted, relToSdd, type SddLayout } from '../layout.ts';
import { createPublisher, type PublisherOptions } from '../publisher.ts';
import { recentTexts } from '../recent-texts.ts';
import { RecordExists, type AuditSealer, type ClosableRecordStore, type Effects, type Note, type StateCommitter, type UpdateOptions, type Versioned, type WriteOptions } from '../types.ts';
import { auditsOf, casStep, contentOf, textOf, writeOptions, type Content } from './cas.ts';

export interface OwnedStoreOptions {
  layout: SddLayout;
  /**
   * Receives `touch(abs, note)` for every write to a committed path, and reads through the texts still
   * waiting for their files (`readThrough`). With `flush`, a checkpoint commits journaled deletes before it
   * drops their journal: a delete must reach the ref from the journal or the commit, never be undone by a
   * restore at the next start.
   */
  committer: Pick<StateCommitter, 'touch'> & Partial<Pick<StateCommitter, 'flush' | 'readThrough'>>;
  log: Logger;
  faults?: Faults;
  timers?: Timers;
  /** The audit chain: signs the audit entries of writes in journal order. */
  sealer?: AuditSealer;
  /** Journal tuning (checkpoint size and interval, syncfs). */
  journal?: Pick<JournalOptions, 'maxBytes' | 'intervalMs' | 'maxAgeMs' | 'syncFs'>;
  /** Write-behind tuning (delay, high-water mark). */
  publisher?: Pick<PublisherOptions, 'delayMs' | 'highWater'>;
}

/** The owned-tree RecordStore. Committed paths go through the journal; runtime files are written durably in place. */
export function createOwnedStore(o: OwnedStoreOptions): ClosableRecordStore {
  const { layout, faults, log } = o;
  const mutex = new KeyedMutex();
  const direct = createAppenders({ faults });
  const sddSlash = layout.sdd + '/';
  const journaled = (abs: string) => abs.startsWith(sddSlash) && isCommitted(relToSdd(layout, abs));
  const touch = (abs: string, note?: Note) => { if (journaled(abs)) o.committer.touch(abs, note); };
  // A delete was delivered since the last checkpoint: that checkpoint commits it before dropping the journal.
  let deletes = false;
  const commitDeletes = async (): Promise<boolean> => {
    if (!deletes || !o.committer.flush) return true;
    deletes = false;
    try {
      await o.committer.flush();
      return true;
    } catch (err) {
      deletes = true;
      log.warn('journal kept: a delete is not committed yet', { err: (err as Error).message });
      return false;
    }
  };
  const recent = recentTexts(RECENT);
  const publisher = createPublisher({ log, faults, timers: o.timers, appended: (abs, note) => touch(abs, note), ...o.publisher });
  // The newest text of a path: waiting for its file (null: a delete), else written lately, else undefined.
  // A commit takes it from here too (the file may be written behind, later).
  const latest = (abs: string): string | null | undefined => { const w = publisher.peek(abs); return w === undefined ? recent.get(abs) : w === null ? null : textOf(w); };
  o.committer.readThrough?.(latest);
  const journal = createJournal({
    layout, log, faults, timers: o.timers, sealer: o.sealer, ...o.journal,
    deliver(ops) {
      for (const op of ops) {
        for (const [abs, text] of op.writes) { publisher.put(abs, text); recent.set(abs, text); }
        for (const [abs, line, note] of op.appends) publisher.append(abs, line, note);
        op.delivered?.();
      }
    },
    // The rotated journals hold what was delivered before this call: the flush waits for exactly that (waiting
    // for no backlog at all failed every checkpoint under a steady load, and the journal grew without bound).
    settle: async (last) => {
      if (last) await publisher.close();
      else if (!(await publisher.flush().then(() => true, () => false))) return false;
      return (!last || publisher.backlog === 0) && (await commitDeletes());
    },
  });

  // One journal line: the writes, then the effects (appends in order, removals, the audit record).
  const inside = (abs: string) => { if (!abs.startsWith(sddSlash)) throw new Error(`store: ${abs} is outside .sdd`); };
  const opOf = (writes: [string, Content | null][], effects: Effects | undefined, note?: Note): JournalOp => {
    for (const abs of effects?.removes ?? []) writes.push([abs, null]);
    const appends: JournalOp['appends'] = [];
    for (const a of effects?.appends ?? []) appends.push([a.abs, JSON.stringify(a.value), a.note ?? note]);
    for (const w of writes) inside(w[0]);
    for (const a of appends) inside(a[0]);
    return { writes, appends, audits: auditsOf(effects) };
  };
  const commit = async (op: JournalOp) => {
    await journal.append(op);
    await publisher.room();
  };

  // A text waiting for the publisher comes first, then one written lately. Read synchronously: a few-KiB
  // file in the page cache costs microseconds, less than a round trip through the thread pool.
  const readTextSync = (abs: string): string | undefined => {
    const waiting = latest(abs);
    if (waiting !== undefined) return waiting ?? undefined;
    try {
      return readFileSync(abs, 'utf8');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  };
  // Paths being created right now count as present, so two creates of one path cannot both pass.
  const creating = new Set<string>();
  const present = (abs: string) => { if (creating.has(abs)) return true; const w = publisher.peek(abs); return w === undefined ? existsSync(abs) : w !== null; };

  const createAll = async <T extends Versioned>(items: readonly ({ abs: string; value: T } & WriteOptions)[]) => {
    const taken = items.find((i) => present(i.abs));
    if (taken) throw new RecordExists(taken.abs);
    const ops = items.map((i) => opOf([[i.abs, contentOf(i.value)]], i.effects, i.note));
    for (const i of items) creating.add(i.abs);
    try {
      await commit({ writes: ops.flatMap((x) => x.writes), appends: ops.flatMap((x) => x.appends), audits: ops.flatMap((x) => x.audits) });
    } finally {
      for (const i of items) creating.delete(i.abs);
    }
    for (const i of items) touch(i.abs, i.note);
  };

  return {
    async readJson<T>(abs: string) {
      const text = readTextSync(abs);
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },
    readText: async (abs) => readTextSync(abs),
    // Read on the publisher's thread; we own the tree, so temp files and locks in it are a dead writer's.
    readFolder: (dir) => publisher.readFolder(dir),
    // The file and the lines still waiting, read in one turn of the event loop (publisher.lines).
    async readJsonl<T>(abs: string) {
      const text = readTextSync(abs) ?? '';
      return [...parseJsonl<T>(text), ...publisher.lines(abs).map((l) => JSON.parse(l) as T)];
    },
    // The lines waiting and the file's size taken in one turn: each line is in one or the other, never both.
    async scanJsonl<T>(abs: string, visit: (rec: T) => boolean) {
      const waiting = publisher.lines(abs);
      const end = fileSize(abs);
      for (let i = waiting.length - 1; i >= 0; i--) if (!visit(JSON.parse(waiting[i]!) as T)) return;
      await scanJsonlBackwards(abs, visit, { end });
    },
    create: <T extends Versioned>(abs: string, value: T, w?: Note | WriteOptions) =>
      mutex.run(abs, async () => {
        await createAll([{ abs, value, ...writeOptions(w) }]);
        return value;
      }),
    createAll,
    update: <T extends Versioned>(abs: string, mutate: (current: T) => T, u: UpdateOptions<T> = {}) =>
      mutex.run(abs, async () => {
        // The tree's only writer: the caller's copy of the record is the file's content, no read or parse.
        const { next, record } = casStep<T>(abs, u.current?.() ?? readTextSync(abs), mutate, u.expectedVersion);
        const written = commit(opOf([[abs, record]], u.effects?.(next), u.note)); // queued for the journal now
        u.queued?.();
        await written;
        u.written?.(next);
        touch(abs, u.note);
        return next;
      }),
    writeJson: (abs, value, note) =>
      mutex.run(abs, async () => {
        const content = contentOf(value);
        if (journaled(abs)) await commit(opOf([[abs, content]], undefined));
        else await writeFileAtomic(abs, textOf(content), { faults });
        touch(abs, note);
      }),
    appendJsonl: (abs, value, note) =>
      journaled(abs) ? commit(opOf([], { appends: [{ abs, value }] }, note)) : direct.append(abs, JSON.stringify(value)),
    emit: (effects, note) => commit(opOf([], effects, note)),
    remove: (abs, note) =>
      mutex.run(abs, async () => {
        if (!journaled(abs)) {
          await unlink(abs).catch((err: unknown) => { if (!isMissing(err)) throw storageError(err, abs); });
          return;
        }
        if (!present(abs)) return;
        // Touched as it is delivered, before a checkpoint can see the line: that checkpoint commits the delete.
        const op = opOf([[abs, null]], undefined);
        op.delivered = () => { touch(abs, note); deletes = true; };
        await commit(op);
      }),
    get backlog() { return publisher.backlog; },
    get journalBytes() { return journal.pendingBytes; },
    async close() {
      await journal.close();
      await direct.close();
    },
  };
}

// Texts kept after their write (~1 KiB each): enough for every task in flight at a few thousand cycles a second.
const RECENT = 4096;
const fileSize = (abs: string): number => statSync(abs, { throwIfNoEntry: false })?.size ?? 0;
