import { execFile } from 'node:child_process';
import { mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';
import type { Logger } from '../lib/log.ts';
import { storageError, syncDir, writeFileAtomic, type Faults } from './io.ts';
import { groupWriter, parseJsonl, type GroupWriter } from './jsonl.ts';
import type { SddLayout } from './layout.ts';
import { auditIntents, isEntry, lastEntries, replayPlan, settledCount, type AuditIntent, type JournalEntry } from './journal-plan.ts';

/** Write-ahead journal of record writes: lines appended concurrently share one `write` + `datasync`. */
export interface Journal {
  /**
   * Log that `rel` (relative to `.sdd`) will hold `text` (null: deleted), with the audit entry of the
   * change when given; resolves once the line is on disk.
   */
  append(rel: string, text: string | null, audit?: Record<string, unknown>): Promise<void>;
  /** Log several writes with one `write`: on disk together, or (on a write error) none of them. */
  appendAll(entries: readonly JournalWrite[]): Promise<void>;
  /** Rotate, make the files written so far durable, drop the journals that are settled. */
  checkpoint(): Promise<void>;
  /** Stop the timer, checkpoint a last time, close the handle. */
  close(): Promise<void>;
  /** Bytes appended by this process that no finished checkpoint covers yet. */
  readonly pendingBytes: number;
}

type SyncIo = Pick<FileHandle, 'write' | 'datasync' | 'truncate'>;
/** A write to journal: path relative to `.sdd`, new text (null: delete), optional audit intent. */
export type JournalWrite = readonly [rel: string, text: string | null, audit?: Record<string, unknown>];

export interface JournalOptions {
  layout: SddLayout;
  log: Logger;
  faults?: Faults;
  /** Rotate once this process appended this many bytes (default 4 MiB). */
  maxBytes?: number;
  /** Checkpoint this often while dirty (default 2000 ms). */
  intervalMs?: number;
  /** Makes every file of the filesystem durable (default `sync -f <dir>`, i.e. syncfs). */
  syncFs?(dir: string): Promise<void>;
  /** Tests: wraps the handle the group writer uses (e.g. to count datasyncs). */
  wrapIo?(io: SyncIo): SyncIo;
  /**
   * Set when this process is the journal's only writer (it holds the server lock): appends skip the
   * check for a rotation by another process, and a checkpoint, instead of looking at record locks, calls
   * `settle` to have every write journaled so far reach its file, then drops every rotated journal
   * (unless `settle` answers false: something journaled must stay for the next start's replay).
   */
  owner?: { settle(): Promise<boolean | void> };
}

// Fast retries: a checkpoint holds the lock for one syncfs.
const LOCK_RETRIES = { retries: 200, minTimeout: 5, maxTimeout: 100, factor: 1.5, randomize: true };
const run = promisify(execFile);
const syncfs = async (dir: string) => { await run('sync', ['-f', dir]); };

/** Paths of the journal files under `.sdd/runtime`. */
export function journalPaths(layout: SddLayout) {
  const dir = layout.runtime;
  return {
    dir, current: join(dir, 'journal.jsonl'), lock: join(dir, 'journal.lock'), rotated: (n: number) => join(dir, `journal.${String(n).padStart(10, '0')}.jsonl`),
    /** Audit intents of dropped journals, kept until reconciled (dropAuditIntents). */
    intents: join(dir, 'journal-intents.json'),
    /** Journaled deletes of dropped journals, kept until committed (dropJournalDeletes). */
    deletes: join(dir, 'journal-deletes.json'),
  };
}

/** A Journal appending to `.sdd/runtime/journal.jsonl`, shared with other processes (O_APPEND). */
export function createJournal(o: JournalOptions): Journal {
  const paths = journalPaths(o.layout);
  const syncFs = o.syncFs ?? syncfs;
  let handle: Promise<{ fh: FileHandle; ino: number; writer: GroupWriter }> | undefined;
  let bytes = 0;
  let appended = 0;
  let covered = 0;
  let dirty = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const openHandle = async () => {
    await mkdir(paths.dir, { recursive: true });
    const fh = await open(paths.current, 'a', 0o644);
    try {
      const st = await fh.stat();
      await syncDir(paths.dir); // the journal's own name must survive a power loss
      // Never truncate a file other processes append to: every line starts with '\n' instead, so a
      // torn fragment of a failed write stays a line of its own (skipped), never glued to the next one.
      const io: SyncIo = { write: fh.write.bind(fh), datasync: () => fh.datasync(), truncate: async () => undefined };
      const writer = groupWriter(o.wrapIo ? o.wrapIo(io) : io, st.size, { beforeWrite: () => o.faults?.beforeWrite?.(paths.current) });
      return { fh, ino: st.ino, writer };
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
  };
  const retire = (h: NonNullable<typeof handle>) => {
    if (handle === h) handle = undefined;
    void h.then(async (x) => { await x.writer.drain(); await x.fh.close(); }).catch(() => undefined);
  };

  // Every entry in one write: one group batch, so they reach the disk together or fail together.
  const appendAll = async (entries: readonly JournalWrite[]) => {
    const at = Date.now();
    const line = '\n' + entries.map(([p, t, au]) => JSON.stringify(au ? { p, t, au, at } : { p, t })).join('\n') + '\n';
    for (;;) {
      const h = (handle ??= openHandle());
      let ino: number;
      try {
        const x = await h;
        await x.writer.write(line);
        ino = x.ino;
      } catch (err) {
        retire(h); // a failed batch breaks the writer: the next append reopens
        throw storageError(err, paths.current);
      }
      dirty = true;
      bytes += line.length;
      appended += line.length;
      if (o.owner) break; // only our own checkpoints rotate, and they drain this handle first
      // Renamed by a checkpoint (ours or another process's) meanwhile: the line may sit in a rotated
      // file that checkpoint has read already and will delete, so it goes into the fresh journal too.
      if ((await stat(paths.current).catch(() => undefined))?.ino === ino) break;
      retire(h);
    }
    timer ??= startTimer();
    if (bytes > (o.maxBytes ?? 4 << 20)) void checkpoint().catch((err: Error) => o.log.error('journal checkpoint failed', { err: err.message }));
  };

  const startTimer = () => {
    const t = setInterval(() => {
      if (dirty) checkpoint().catch((err: Error) => o.log.error('journal checkpoint failed', { err: err.message }));
    }, o.intervalMs ?? 2000);
    t.unref();
    return t;
  };

  const doCheckpoint = async (wait: boolean) => {
    if (!dirty && !wait) return;
    const release = await lockJournal(paths.lock, o.log, wait);
    if (!release) return; // another process is checkpointing; the next tick tries again
    dirty = false;
    bytes = 0;
    const mark = appended;
    try {
      await rotate(paths);
      if (o.owner) await settleOwned(o.owner);
      else {
        if (handle) retire(handle);
        await settle(o.layout, syncFs);
      }
      covered = Math.max(covered, mark);
    } catch (err) {
      dirty = true;
      throw err;
    } finally {
      await release().catch(() => undefined);
    }
  };
  // Lines written through the old handle until now are in the rotated files: wait for them, have the
  // store put every journaled text on its file, make the files durable, then the journals can go.
  const settleOwned = async (owner: { settle(): Promise<boolean | void> }) => {
    const old = handle;
    handle = undefined;
    if (old) {
      await old.then((x) => x.writer.drain()).catch(() => undefined);
      retire(old);
    }
    if ((await owner.settle()) === false) return;
    const names = await listRotated(paths.dir);
    if (!names.length) return;
    await syncFs(o.layout.sdd);
    for (const n of names) await unlink(join(paths.dir, n)).catch(() => undefined);
  };
  const checkpoint = (wait = false): Promise<void> => (running ??= doCheckpoint(wait).finally(() => { running = undefined; }));

  return {
    get pendingBytes() {
      return appended - covered;
    },
    append: (rel, text, audit) => appendAll([[rel, text, audit]]),
    appendAll,
    checkpoint: () => checkpoint(true),
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
      await checkpoint(true);
      if (handle) retire(handle);
    },
  };
}

/**
 * Apply every journaled write whose file differs (durably), then drop the journal; the count applied.
 * Run before anything reads records. The audit intents of the dropped journals go into `intents`: their
 * audit records may be missing (a crash after the write, before its audit append), see reconcileAudit.
 * Paths whose last journaled word is a delete go into `deleted`: the state commit must delete them too.
 */
export async function replayJournal(layout: SddLayout, log: Logger, syncFs: (dir: string) => Promise<void> = syncfs, intents?: AuditIntent[], deleted?: string[]): Promise<number> {
  const paths = journalPaths(layout);
  const release = await lockJournal(paths.lock, log, true);
  try {
    await rotate(paths);
    const names = await listRotated(paths.dir);
    const files = await Promise.all(names.map((n) => readEntries(join(paths.dir, n))));
    const last = lastEntries(files.flat());
    if (deleted) {
      // Kept in a file of their own until the caller has committed them (dropJournalDeletes): without
      // the journal, a file missing on disk would otherwise be restored from the ref at the next start.
      const all = [...new Set([...(await readDeletes(paths.deletes)), ...[...last].filter(([, t]) => t === null).map(([rel]) => rel)])];
      deleted.push(...all);
      if (all.length && names.length) await writeFileAtomic(paths.deletes, JSON.stringify(all));
    }
    if (intents) {
      // The journals go below; their intents are kept in a file of their own until the caller has
      // reconciled them (dropAuditIntents), so a crash before that loses none.
      intents.push(...(await readIntents(paths.intents)), ...auditIntents(files.flat()));
      if (intents.length && names.length) await writeFileAtomic(paths.intents, JSON.stringify(intents));
    }
    const onDisk = await readTexts(layout, [...last.keys()]);
    const plan = replayPlan(last, onDisk);
    for (const [rel, text] of plan) {
      const abs = join(layout.sdd, rel);
      if (text === null) await unlink(abs).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
      else await writeFileAtomic(abs, text);
    }
    if (names.length) await syncFs(layout.sdd);
    for (const n of names) await unlink(join(paths.dir, n)).catch(() => undefined);
    if (plan.size) log.info(`journal replay restored ${plan.size} file(s)`);
    return plan.size;
  } finally {
    await release?.().catch(() => undefined);
  }
}

/** The audit intents replayJournal handed over are reconciled: forget them. */
export async function dropAuditIntents(layout: SddLayout): Promise<void> {
  await unlink(journalPaths(layout).intents).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
}

/** The journaled deletes replayJournal handed over are committed: forget them. */
export async function dropJournalDeletes(layout: SddLayout): Promise<void> {
  await unlink(journalPaths(layout).deletes).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
}

async function readDeletes(abs: string): Promise<string[]> {
  try {
    const v: unknown = JSON.parse(await readFile(abs, 'utf8'));
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string' && isEntry({ p, t: null })) : [];
  } catch {
    return [];
  }
}

async function readIntents(abs: string): Promise<AuditIntent[]> {
  try {
    const v: unknown = JSON.parse(await readFile(abs, 'utf8'));
    return Array.isArray(v) ? v.filter((i): i is AuditIntent => typeof i?.entry === 'object' && i.entry !== null && typeof i.at === 'number') : [];
  } catch {
    return []; // absent, or unreadable (then nothing can be done with it)
  }
}

// The journal lock; with wait = false, undefined when another process holds it.
async function lockJournal(lock: string, log: Logger, wait: boolean): Promise<(() => Promise<void>) | undefined> {
  await mkdir(join(lock, '..'), { recursive: true });
  try {
    return await lockfile.lock(lock, {
      realpath: false, lockfilePath: `${lock}.dir`, stale: 10_000, retries: wait ? LOCK_RETRIES : 0,
      onCompromised: (err) => log.error('journal lock compromised', { err: err.message }),
    });
  } catch (err) {
    if (!wait && (err as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw err;
  }
}

// Under the journal lock: the current journal becomes the newest rotated file; appends go to a fresh one.
async function rotate(paths: ReturnType<typeof journalPaths>): Promise<void> {
  const names = await listRotated(paths.dir);
  const next = names.length ? Number(names[names.length - 1]!.split('.')[1]) + 1 : 1;
  await rename(paths.current, paths.rotated(next)).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
}

// Rotated journals, oldest first, are deleted while settled (journal-plan.ts: every entry superseded or
// its record unlocked, i.e. its file renamed before the syncfs below makes it durable). The first
// unsettled one (a write between its journal line and its rename) and all after it wait a round.
async function settle(layout: SddLayout, syncFs: (dir: string) => Promise<void>): Promise<void> {
  const paths = journalPaths(layout);
  const names = await listRotated(paths.dir);
  if (!names.length) return;
  const files = await Promise.all(names.map(async (n) => lastEntries(await readEntries(join(paths.dir, n)))));
  const later = new Set(lastEntries(await readEntries(paths.current)).keys());
  const locked = await lockedPaths(layout, [...new Set(files.flatMap((f) => [...f.keys()]))]);
  const keep = settledCount(files, later, locked);
  if (!keep) return;
  await syncFs(layout.sdd);
  // Oldest first: a newer journal never goes while an older one it supersedes is still there.
  for (const n of names.slice(0, keep)) await unlink(join(paths.dir, n)).catch(() => undefined);
}

// Paths whose record lock exists now; a few at a time, so request IO never queues behind thousands of stats.
async function lockedPaths(layout: SddLayout, rels: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < rels.length; i += 16) {
    await Promise.all(rels.slice(i, i + 16).map(async (rel) => {
      if (await stat(join(layout.sdd, `${rel}.lock`)).catch(() => null)) out.add(rel);
    }));
  }
  return out;
}

async function listRotated(dir: string): Promise<string[]> {
  const all = await readdir(dir).catch(() => [] as string[]);
  return all.filter((n) => /^journal\.\d{10}\.jsonl$/.test(n)).sort();
}

async function readEntries(abs: string): Promise<JournalEntry[]> {
  const text = await readFile(abs, 'utf8').catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return ''; throw err; });
  return parseJsonl<JournalEntry>(text);
}

// Current text of each path (null when absent).
async function readTexts(layout: SddLayout, rels: string[]): Promise<Map<string, string | null>> {
  const read = (rel: string) => readFile(join(layout.sdd, rel), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  return new Map(await Promise.all(rels.map(async (rel) => [rel, await read(rel)] as const)));
}
