// At start, before anything reads records: every journaled change reaches its file, then the journal goes.
import { readdirSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readFile, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { replaceFileSync, writeFileAtomic } from './atomic.ts';
import { isMissing } from './disk.ts';
import { journalPaths, listRotated, ROTATED } from './journal.ts';
import { dataOf, holdsData } from './prealloc.ts';
import { syncfs } from './syncfs.ts';
import { missingLines, parseJournal, replayPlan } from './journal-plan.ts';
import { readTail } from './jsonl.ts';
import { isCommitted, type SddLayout } from './layout.ts';

/** What a replay did: files rewritten (or deleted) and lines appended, audit records among them. */
export interface ReplayResult { files: number; lines: number; audit: number }

/**
 * Write every journaled text whose file differs, append every journaled line its file lacks (exactly
 * once: the file's end is matched against the journal, journal-plan.ts), syncfs, drop the journals.
 * Run under the server lock, before the audit chain opens or anything reads records. Committed paths
 * whose last journaled word is a delete go into `deleted`: the state commit must delete them too.
 */
export async function replayJournal(layout: SddLayout, log: Logger, syncFs: (dir: string) => Promise<void> = syncfs, deleted?: string[]): Promise<ReplayResult> {
  const paths = journalPaths(layout);
  const names = [...(await listRotated(paths.dir)), 'journal.jsonl'];
  // A journal's text ends at its first NUL: the zeros written ahead of its data (prealloc.ts).
  const texts = await Promise.all(names.map((n) => readFile(join(paths.dir, n), 'utf8').then(dataOf, (err: unknown) => { if (isMissing(err)) return ''; throw err; })));
  const plan = replayPlan(texts.flatMap(parseJournal));
  if (deleted) {
    // Kept in a file of their own until the caller has committed them (dropJournalDeletes): without
    // the journal, a file missing on disk would otherwise be restored from the ref at the next start.
    const now = [...plan.texts].filter(([rel, t]) => t === null && isCommitted(rel)).map(([rel]) => rel);
    const all = [...new Set([...readJournalDeletes(layout), ...now])];
    deleted.push(...all);
    if (now.length) await writeFileAtomic(paths.deletes, JSON.stringify(all));
  }
  const result: ReplayResult = { files: 0, lines: 0, audit: 0 };
  for (const [rel, text] of plan.texts) {
    const abs = join(layout.sdd, rel);
    const now = await readFile(abs, 'utf8').catch((err: unknown) => { if (isMissing(err)) return null; throw err; });
    if (now === text) continue;
    replaceFileSync(abs, text);
    result.files++;
  }
  for (const [rel, lines] of plan.appends) {
    const abs = join(layout.sdd, rel);
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 1);
    const { text, whole } = await readTail(abs, bytes);
    const { missing, seal } = missingLines(text, whole, lines);
    if (!missing.length) continue;
    await appendTo(abs, (seal ? '\n' : '') + missing.join('\n') + '\n');
    result.lines += missing.length;
    if (rel.startsWith('audit/')) result.audit += missing.length;
  }
  if (texts.some((t) => t.length)) await syncFs(layout.sdd);
  for (const n of names) await unlink(join(paths.dir, n)).catch(() => undefined);
  if (result.files || result.lines) log.info(`journal replay: ${result.files} file(s) restored, ${result.lines} line(s) appended (${result.audit} audit record(s))`);
  return result;
}

// Appends to a file that may not exist yet (its folder neither).
async function appendTo(abs: string, data: string): Promise<void> {
  await mkdir(dirname(abs), { recursive: true });
  await appendFile(abs, data);
}

/** Whether a journal holds changes a replay would write (a crash; a clean stop leaves none). */
export function journalPending(layout: SddLayout): boolean {
  const paths = journalPaths(layout);
  if (holdsData(paths.current)) return true;
  try {
    return readdirSync(paths.dir).some((n) => ROTATED.test(n));
  } catch {
    return false;
  }
}

/** The journaled deletes replayJournal handed over are committed: forget them. */
export async function dropJournalDeletes(layout: SddLayout): Promise<void> {
  await unlink(journalPaths(layout).deletes).catch((err: unknown) => { if (!isMissing(err)) throw err; });
}

/** The journaled deletes a replay handed over and the state has not committed yet (relative to `.sdd`). */
export function readJournalDeletes(layout: SddLayout): string[] {
  try {
    const v: unknown = JSON.parse(readFileSync(journalPaths(layout).deletes, 'utf8'));
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string' && isCommitted(p) && !p.split('/').some((s) => s === '..' || s === '')) : [];
  } catch {
    return []; // absent, or unreadable (then nothing can be done with it)
  }
}
