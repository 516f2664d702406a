// The walk of `.sdd` at start: its committed files and, after a clean stop, a stat of each. In slices
// between which the event loop runs: the ref's listing streams from `git ls-tree` meanwhile, and a walk of
// 200k files in one synchronous pass left git blocked on a full pipe for its whole length.
import { opendirSync, statSync, type Dirent } from 'node:fs';
import { isCommitted } from './layout.ts';
import { nextTurn } from '../lib/timers.ts';

/** Per file of a walk (same order): size and last change (the later of mtime and ctime, ms); NaN when gone. */
export interface FileStamps { size: Float64Array; changed: Float64Array }

export interface SddWalk {
  /** Committed regular files, relative to `.sdd`. */
  files: string[];
  /** With `stat`: each file's stamps. */
  stamps: FileStamps | null;
  /** Temp files and lock folders found in committed folders (a dead writer's), relative to `.sdd`. */
  litter: string[];
}

// Directory entries or stats between two turns of the event loop.
const SLICE = 512;

export interface WalkOptions {
  /** Stat every file found (after a clean stop: the comparison vouches for a file by its stamps). */
  stat?: boolean;
  /** Folders to walk from (relative to `base`; default: `base` itself). */
  roots?: readonly string[];
  /** Folders (relative to `base`) not walked: another thread compares them (recover.ts scanForStart). */
  skip?: readonly string[];
}

/**
 * A folder's entries, read in batches and unsorted: readdirSync sorts every name first (libuv's scandir) and
 * returns them all at once, 0.13–0.27 s of a 100k folder against 0.06 s here (bench/README.md "start").
 */
export function* folderEntries(abs: string): Generator<Dirent, void, undefined> {
  const dir = opendirSync(abs, { bufferSize: 1024 });
  try {
    for (let e = dir.readSync(); e !== null; e = dir.readSync()) yield e;
  } finally {
    dir.closeSync();
  }
}

/** Walk `base` (runtime/secrets/worktrees skipped early), then stat every file found when `stat` is set. */
export async function walkSdd(base: string, o: WalkOptions = {}): Promise<SddWalk> {
  const skip = new Set(o.skip);
  const files: string[] = [];
  const litter: string[] = [];
  const folders = [...(o.roots ?? [''])];
  let since = 0;
  for (let rel = folders.pop(); rel !== undefined; rel = folders.pop()) {
    try {
      for (const e of folderEntries(rel ? `${base}/${rel}` : base)) {
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (!isCommitted(path)) {
          if ((e.name.endsWith('.tmp') || e.name.endsWith('.lock')) && isCommitted(rel)) litter.push(path);
        } else if (e.isDirectory()) { if (!skip.has(path)) folders.push(path); }
        else if (e.isFile()) files.push(path);
        if (++since >= SLICE) { since = 0; await nextTurn(); }
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue; // gone (or replaced) while we looked
      throw err;
    }
  }
  return { files, stamps: o.stat ? await statAll(base, files) : null, litter };
}

async function statAll(base: string, files: readonly string[]): Promise<FileStamps> {
  const size = new Float64Array(files.length);
  const changed = new Float64Array(files.length);
  for (let i = 0; i < files.length; i += SLICE) {
    for (let k = i; k < Math.min(i + SLICE, files.length); k++) {
      const st = statSync(`${base}/${files[k]!}`, { throwIfNoEntry: false }); // paths from readdir: already normal
      size[k] = st ? st.size : NaN;
      changed[k] = st ? Math.max(st.mtimeMs, st.ctimeMs) : NaN;
    }
    await nextTurn();
  }
  return { size, changed };
}
