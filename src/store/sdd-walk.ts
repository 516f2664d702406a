// The walk of `.sdd` at start: its committed files and, after a clean stop, a stat of each. In slices
// between which the event loop runs: the ref's listing streams from `git ls-tree` meanwhile, and a walk of
// 200k files in one synchronous pass left git blocked on a full pipe for its whole length.
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { moduleWorker } from '../lib/worker.ts';
import { isCommitted } from './layout.ts';

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
const turn = () => new Promise((resolve) => setImmediate(resolve));

export interface WalkOptions {
  /** Stat every file found (after a clean stop: the comparison vouches for a file by its stamps). */
  stat?: boolean;
  /** Folders to walk from (relative to `base`; default: `base` itself). */
  roots?: readonly string[];
  /**
   * Folders (relative to `base`) walked, and stat'ed, on a thread of their own meanwhile: on a large board
   * the walk and 200k stats cost ~2 s of one CPU (mostly the kernel's), and the second CPU is otherwise
   * idle once the board has loaded (bench/README.md "start").
   */
  aside?: readonly string[];
}

/** Walk `base` (runtime/secrets/worktrees skipped early), then stat every file found when `stat` is set. */
export async function walkSdd(base: string, o: WalkOptions = {}): Promise<SddWalk> {
  const helper = o.aside?.length ? walkOnThread(base, { stat: o.stat ?? false, roots: o.aside }) : null;
  helper?.catch(() => undefined); // awaited below; unhandled only if this walk throws first
  const skip = new Set(o.aside);
  const files: string[] = [];
  const litter: string[] = [];
  const folders = [...(o.roots ?? [''])];
  let since = 0;
  for (let rel = folders.pop(); rel !== undefined; rel = folders.pop()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(rel ? `${base}/${rel}` : base, { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue; // gone (or replaced) while we looked
      throw err;
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (!isCommitted(path)) {
        if ((e.name.endsWith('.tmp') || e.name.endsWith('.lock')) && isCommitted(rel)) litter.push(path);
        continue;
      }
      if (e.isDirectory()) { if (!skip.has(path)) folders.push(path); }
      else if (e.isFile()) files.push(path);
    }
    if ((since += entries.length) >= SLICE) { since = 0; await turn(); }
  }
  const own: SddWalk = { files, stamps: o.stat ? await statAll(base, files) : null, litter };
  return helper ? joinWalks(own, await helper) : own;
}

/** What the walk thread answers: its walk, the stamps' buffers transferred. */
export interface WalkReply { files: string[]; litter: string[]; size: Float64Array | null; changed: Float64Array | null }

function walkOnThread(base: string, o: { stat: boolean; roots: readonly string[] }): Promise<SddWalk> {
  return new Promise((resolve, reject) => {
    const worker = moduleWorker(import.meta.url, 'sdd-walk-worker', { workerData: { base, ...o }, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    worker.once('message', (m: WalkReply) => resolve({ files: m.files, litter: m.litter, stamps: m.size && m.changed ? { size: m.size, changed: m.changed } : null }));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the walk's thread exited (${code}) without an answer`)));
  });
}

function joinWalks(a: SddWalk, b: SddWalk): SddWalk {
  const stamps = a.stamps && b.stamps ? { size: concat(a.stamps.size, b.stamps.size), changed: concat(a.stamps.changed, b.stamps.changed) } : null;
  return { files: a.files.concat(b.files), stamps, litter: a.litter.concat(b.litter) };
}

function concat(x: Float64Array, y: Float64Array): Float64Array {
  const out = new Float64Array(x.length + y.length);
  out.set(x);
  out.set(y, x.length);
  return out;
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
    await turn();
  }
  return { size, changed };
}
