// The clean-stop marker: after a clean stop at the ref's head, a file whose stat says it is untouched since
// is known by its stat at the next start, not read (recover.ts).
import { readFileSync, statSync, type Stats } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../lib/log.ts';
import type { SddLayout } from './layout.ts';
import type { RefBlob } from './restore.ts';

/** A clean stop: `head` was committed after every file was written, at `at` (the marker's mtime, ms). */
export interface CleanStop { head: string; at: number }

// Timestamps come from the kernel's coarse clock and a clock may be set back a little: a file changed
// within this long before a clean stop is read again, never trusted.
const RACY_MS = 2000;

/**
 * A file is as the ref holds it, without reading it: the last stop was clean at the ref's head, the file
 * has the blob's size, and neither its content (mtime) nor its inode (ctime, which no tool can set back)
 * changed since. Any edit while the server was down moves one of them.
 */
export function unchangedSince(st: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs'>, blob: RefBlob | undefined, clean: CleanStop | null): boolean {
  return clean !== null && blob !== undefined && blob.size === st.size && Math.max(st.mtimeMs, st.ctimeMs) < clean.at - RACY_MS;
}

/** The clean stop recorded in `file` (its mtime is when), if it names `head`; else null (a crash, or the ref moved since). */
export function readCleanStop(file: string, head: string | null): CleanStop | null {
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { head?: unknown };
    return head !== null && c.head === head ? { head, at: statSync(file).mtimeMs } : null;
  } catch {
    return null;
  }
}

/**
 * Record a clean stop: every file this server wrote is in the ref at `head` and nothing writes any more.
 * The marker's own mtime (the file system's clock, as the files' times) says since when.
 */
export async function markCleanStop(layout: SddLayout, head: string | null, log: Logger): Promise<void> {
  if (!head) return;
  try {
    await mkdir(dirname(layout.stateClean), { recursive: true });
    await writeFile(layout.stateClean, JSON.stringify({ head }) + '\n');
  } catch (err) {
    log.warn('clean stop not recorded: the next start reads every file', { err: (err as Error).message });
  }
}
