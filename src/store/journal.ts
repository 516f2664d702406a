// The server's write-ahead journal, a transactional outbox: one line per operation carries the new
// texts of its files and the lines it appends elsewhere (its audit record, signed here in journal
// order; its archive record; progress). One group-committed datasync acknowledges all of it.
import { readdir, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { appendLog } from './append-log.ts';
import type { Faults } from './disk.ts';
import { encodeOpInto } from './journal-plan.ts';
import { relToSdd, type SddLayout } from './layout.ts';
import { createSyncFs } from './syncfs.ts';
import type { Content } from './records/cas.ts';
import type { AuditEntry, AuditSealer, Note } from './types.ts';

/**
 * One operation to journal: absolute paths; `audits` are signed into appends when its batch is formed.
 * A write's content is a text or a record (null: delete); an appended line is the JSON text of one value.
 */
export interface JournalOp {
  writes: [abs: string, content: Content | null][];
  appends: [abs: string, line: string, note?: Note][];
  audits: AuditEntry[];
  /** Called as the operation is delivered (durable), before a checkpoint can see it. */
  delivered?: () => void;
}

export interface Journal {
  /** Resolves once the operation is on disk and handed to `deliver`; StorageUnavailable when refused. */
  append(op: JournalOp): Promise<void>;
  /** Stop the timer and checkpoint a last time (`settled`: the files are written, drop the journals). */
  close(): Promise<void>;
  /** Bytes journaled that no finished checkpoint covers yet. */
  readonly pendingBytes: number;
}

export interface JournalOptions {
  layout: SddLayout;
  log: Logger;
  faults?: Faults;
  timers?: Timers;
  /** Signs audit entries in journal order (observe's chain); operations with audits need it. */
  sealer?: AuditSealer;
  /** A batch is durable: its operations, in journal order, with audits signed into `appends`. */
  deliver(ops: JournalOp[]): void;
  /** Every delivered change is on its file (true), or could not be written now (false); `last`: at close, one try. */
  settle(last: boolean): Promise<boolean>;
  /** Checkpoint once this many bytes were journaled since the last one (default 64 MiB). */
  maxBytes?: number;
  /** Checkpoint once no change came for this long (checked this often; default 2000 ms). */
  intervalMs?: number;
  /** ...or once the oldest change not checkpointed is this old, changes coming or not (default 30 s). */
  maxAgeMs?: number;
  /** Makes every file of the filesystem durable (default syncfs(2) through a helper: syncfs.ts). */
  syncFs?(dir: string): Promise<void>;
}


/** Paths of the journal files under `.sdd/runtime`. */
export function journalPaths(layout: SddLayout) {
  const dir = layout.runtime;
  return {
    dir, current: join(dir, 'journal.jsonl'), rotated: (n: number) => join(dir, `journal.${String(n).padStart(10, '0')}.jsonl`),
    /** Journaled deletes of replayed journals, kept until committed (dropJournalDeletes). */
    deletes: join(dir, 'journal-deletes.json'),
  };
}

// Zeros kept written past the journal's last line (prealloc.ts): a megabyte costs ~1 ms to add (at most one
// batch's datasync in each ~1 MiB of journal) and spares every datasync the file's new size, ~90 µs of ~220.
const PREALLOCATE = 1 << 20;

/** A rotated journal's file name (`rotated` above). */
export const ROTATED = /^journal\.\d{10}\.jsonl$/;

/** Rotated journal file names, oldest first. */
export async function listRotated(dir: string): Promise<string[]> {
  const all = await readdir(dir).catch(() => [] as string[]);
  return all.filter((n) => ROTATED.test(n)).sort();
}

/**
 * The journal of a tree this process owns (it holds the server lock): nobody else writes it. A
 * checkpoint (timer, size) rotates it, has every delivered change reach its file, syncfs, drops it.
 */
export function createJournal(o: JournalOptions): Journal {
  const paths = journalPaths(o.layout);
  const timers = o.timers ?? systemTimers;
  const rel = (abs: string) => relToSdd(o.layout, abs);
  // Sealing happens as a batch is formed, in the log's one loop: seq order = journal order.
  let mark: unknown;
  const log = appendLog<JournalOp>(paths.current, {
    faults: o.faults,
    preallocate: PREALLOCATE,
    encode(ops) {
      mark = o.sealer?.mark();
      for (const op of ops) {
        if (op.audits.length && !o.sealer) throw new Error('journal: an audit entry but no audit chain');
        for (const e of op.audits.splice(0)) {
          const { abs, line } = o.sealer!.seal(e);
          op.appends.push([abs, line]);
        }
      }
      const out: string[] = [];
      for (const op of ops) {
        encodeOpInto(out, op.writes, op.appends, rel);
        out.push('\n');
      }
      return out;
    },
    written: (ops) => o.deliver(ops),
    refused: () => { if (o.sealer) o.sealer.rewind(mark); },
  });
  const helper = createSyncFs(o.layout.sdd);
  let covered = 0;
  let dirty = false;
  let dirtySince = 0; // when the oldest change not checkpointed was journaled
  let lastAt = 0; // when the last change was journaled
  let running: Promise<boolean> | undefined;

  const doCheckpoint = async (last = false): Promise<boolean> => {
    if (!dirty && !last) return true;
    dirty = false;
    const since = dirtySince;
    // A failed checkpoint leaves its changes dirty, as old as they were.
    const failed = () => { dirty = true; dirtySince = since; return false; };
    try {
      const upTo = log.written;
      const names = await listRotated(paths.dir);
      const to = paths.rotated(names.length ? Number(names.at(-1)!.split('.')[1]) + 1 : 1);
      await log.rotate(to); // between two batches: every line in it was delivered
      if (!(await o.settle(last))) return failed();
      await (o.syncFs ? o.syncFs(o.layout.sdd) : helper.sync());
      // Oldest first: a newer journal never goes while an older one it supersedes is still there.
      for (const name of [...names, basename(to)]) await unlink(join(paths.dir, name)).catch(() => undefined);
      covered = upTo;
      return true;
    } catch (err) {
      failed();
      throw err;
    }
  };
  const checkpoint = (last = false): Promise<boolean> => (running ??= doCheckpoint(last).finally(() => { running = undefined; }));
  const onError = (err: Error) => { o.log.error('journal checkpoint failed', { err: err.message }); };
  // A checkpoint costs a rotation, a flush of the files and a syncfs: when the board goes quiet, when the journal
  // is large, or when its oldest change is old. Every 2 s under a steady load cost ~20% of the fused loop.
  const intervalMs = o.intervalMs ?? 2000;
  const timer = timers.setInterval(() => {
    const now = timers.now();
    if (dirty && (now - lastAt >= intervalMs || now - dirtySince >= (o.maxAgeMs ?? 30_000))) checkpoint().catch(onError);
  }, intervalMs);

  return {
    async append(op) {
      await log.append(op);
      lastAt = timers.now();
      if (!dirty) { dirty = true; dirtySince = lastAt; }
      if (log.written - covered > (o.maxBytes ?? 64 << 20)) void checkpoint().catch(onError);
    },
    async close() {
      timers.clearInterval(timer);
      await log.drain();
      await running?.catch(() => undefined);
      const settled = await checkpoint(true).catch((err: Error) => { onError(err); return false; });
      if (!settled) o.log.warn('journal kept for the next start: some files are not written yet');
      helper.close();
      await log.close();
    },
    get pendingBytes() { return log.written - covered; },
  };
}
