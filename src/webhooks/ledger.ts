// Replay ledgers: the last N delivery ids in memory (pure window) and on disk (JSONL, compacted, loaded at start).
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { createAppenders, parseJsonl, writeFileAtomic } from '../store/index.ts';

/** One remembered delivery. */
export interface LedgerEntry {
  delivery_id: string;
  /** When it was recorded (epoch seconds). */
  ts: number;
  /** The task the delivery created or changed, when it did. */
  task_id?: string;
}

/** The last `cap` delivery ids, oldest evicted first; remembering an id again makes it the newest (pure). */
export class ReplayWindow {
  private readonly entries = new Map<string, LedgerEntry>();
  constructor(readonly cap = 4096) {}

  has(id: string): boolean { return this.entries.has(id); }
  get(id: string): LedgerEntry | undefined { return this.entries.get(id); }
  get size(): number { return this.entries.size; }

  remember(e: LedgerEntry): void {
    this.entries.delete(e.delivery_id);
    this.entries.set(e.delivery_id, e);
    while (this.entries.size > this.cap) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Oldest first. */
  list(): LedgerEntry[] { return [...this.entries.values()]; }
}

/** A valid ledger line, or null (torn lines and wrong types are skipped). */
export function ledgerLine(v: unknown): LedgerEntry | null {
  const o = v as Partial<LedgerEntry> | null;
  if (!o || typeof o !== 'object' || typeof o.delivery_id !== 'string' || typeof o.ts !== 'number') return null;
  return { delivery_id: o.delivery_id, ts: o.ts, ...(typeof o.task_id === 'string' ? { task_id: o.task_id } : {}) };
}

/** A replay window kept in a JSONL file: loaded at open, one durable line per record, compacted past a bound. */
export interface Ledger {
  has(id: string): boolean;
  get(id: string): LedgerEntry | undefined;
  /** Remember a delivery; the line is on disk when this resolves (a disk error is logged, never thrown). */
  record(id: string, extra?: { task_id?: string }): Promise<void>;
  readonly size: number;
  /** Lines in the file now (for tests of the bound). */
  readonly lines: number;
  close(): Promise<void>;
}

/** Open the ledger at `path`; the file is rewritten with the window alone once it holds `compactAt` lines (default 2 × cap). */
export async function openLedger(path: string, o: { cap?: number; compactAt?: number; nowS: () => number; log: Logger }): Promise<Ledger> {
  const window = new ReplayWindow(o.cap ?? 4096);
  const compactAt = o.compactAt ?? 2 * window.cap;
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') o.log.warn(`replay ledger ${path} unreadable, starting empty: ${err.message}`);
    return '';
  });
  let lines = 0;
  for (const rec of parseJsonl<unknown>(text)) {
    const e = ledgerLine(rec);
    if (e) { window.remember(e); lines++; }
  }
  const appender = createAppenders();
  const writing = new Set<Promise<void>>();
  let compacting: Promise<void> | null = null;

  // The file becomes the window alone; appends wait for it and reopen the new file.
  const compact = async () => {
    await Promise.all([...writing]);
    await appender.close();
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, window.list().map((e) => JSON.stringify(e) + '\n').join(''));
    lines = window.size;
  };

  const record = async (id: string, extra: { task_id?: string } = {}) => {
    const e: LedgerEntry = { delivery_id: id, ts: Math.round(o.nowS() * 1000) / 1000, ...extra };
    window.remember(e);
    while (compacting) await compacting;
    const p = appender.append(path, JSON.stringify(e)).then(() => { lines++; }, (err: Error) => o.log.warn(`replay ledger append failed: ${err.message}`));
    writing.add(p);
    await p.finally(() => writing.delete(p));
    if (lines >= compactAt && !compacting) {
      compacting = compact().catch((err: Error) => o.log.warn(`replay ledger compaction failed: ${err.message}`)).finally(() => { compacting = null; });
      await compacting;
    }
  };

  return {
    has: (id) => window.has(id),
    get: (id) => window.get(id),
    record,
    get size() { return window.size; },
    get lines() { return lines; },
    async close() {
      while (compacting) await compacting;
      await Promise.all([...writing]);
      await appender.close();
    },
  };
}
