// Pure decisions of the write-ahead journal (journal.ts): which entry wins, what replay writes, which files may go.

/**
 * One journal line: `p` relative to `.sdd`, `t` the file's full new text, or null for a delete; `au`
 * the audit entry of the change (its intent: journaled with the write, appended to the audit log after)
 * and `at` when it was journaled (epoch ms).
 */
export interface JournalEntry {
  p: string;
  t: string | null;
  au?: Record<string, unknown>;
  at?: number;
}

/** An audit entry journaled with a write, and when. */
export interface AuditIntent {
  entry: Record<string, unknown>;
  at: number;
}

/** The audit intents of the entries, in journal order (well-formed entries whose `au` is an object). */
export function auditIntents(entries: readonly unknown[]): AuditIntent[] {
  const out: AuditIntent[] = [];
  for (const e of entries) {
    if (!isEntry(e) || e.au === null || typeof e.au !== 'object' || Array.isArray(e.au)) continue;
    out.push({ entry: e.au, at: typeof e.at === 'number' ? e.at : 0 });
  }
  return out;
}

/** The last entry per path, in journal order; lines that are not well-formed entries are skipped. */
export function lastEntries(entries: readonly unknown[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const e of entries) {
    if (!isEntry(e)) continue;
    out.delete(e.p); // keep insertion order = order of the last write
    out.set(e.p, e.t);
  }
  return out;
}

/** The entries replay must write: those whose file text differs from the journal's last word. */
export function replayPlan(last: Map<string, string | null>, onDisk: Map<string, string | null>): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [p, t] of last) if ((onDisk.get(p) ?? null) !== t) out.set(p, t);
  return out;
}

/**
 * How many rotated journals (oldest first) may be deleted: file i is settled when each of its paths has
 * an entry in a later file (rotated, or `later`: the current journal) or is not `locked`. Every journaled
 * write holds its record's lock from before its line until after its rename, so a path seen unlocked
 * once its line was read has its file written (or its writer died, unacknowledged).
 */
export function settledCount(files: readonly Map<string, string | null>[], later: ReadonlySet<string>, locked: ReadonlySet<string>): number {
  for (let i = 0; i < files.length; i++) {
    for (const p of files[i]!.keys()) {
      if (later.has(p) || !locked.has(p)) continue;
      if (files.slice(i + 1).some((f) => f.has(p))) continue;
      return i;
    }
  }
  return files.length;
}

/** A well-formed entry; paths come from a file anyone on the box could edit: stay inside `.sdd`. */
export function isEntry(e: unknown): e is JournalEntry {
  if (e === null || typeof e !== 'object') return false;
  const { p, t } = e as Record<string, unknown>;
  if (typeof p !== 'string' || !(typeof t === 'string' || t === null)) return false;
  return p.length > 0 && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '' || s === '.');
}
