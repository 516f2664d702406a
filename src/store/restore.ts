// Restore at start: every committed path refs/sdd/state holds and the disk lacks is written back.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { tempPathFor } from './atomic.ts';
import { isCommitted, isTaskFile, STATE_REF, type SddLayout } from './layout.ts';

/** What a restore wrote back (paths relative to `.sdd`). */
export interface RestoreResult {
  paths: string[];
  tasks: number;
  /** The disk held no task file before the restore (a fresh clone, a deleted `.sdd`). */
  diskHadNoTasks: boolean;
}

/** The per-task folders: offline commands leave them to `svc up` and `svc init` (a 100k board is 100k files). */
export const BOARD_DIRS = ['tasks', 'progress', 'gates'] as const;
/** What `svc up` writes back itself under its lock, from the listings its start makes anyway (committer recover). */
export const SERVER_RESTORES = [...BOARD_DIRS, 'eu_ai_act'] as const;

// Blobs read per `git cat-file --batch` run: bounds memory on a 100k board.
const CHUNK = 2000;

/**
 * Write back every committed path that `ref` holds and the disk lacks, except `skip` (paths a journaled
 * delete removed) and the top-level folders `skipDirs`. Synchronous: it runs before anything reads `.sdd`.
 */
export function restoreFromRef(layout: SddLayout, opts: { skip?: ReadonlySet<string>; ref?: string; skipDirs?: readonly string[] } = {}): RestoreResult {
  const head = gitSync(layout.root, ['rev-parse', '--verify', '-q', `${opts.ref ?? STATE_REF}^{commit}`], true)?.toString().trim();
  if (!head) return { paths: [], tasks: 0, diskHadNoTasks: true };
  const present = folderNames(layout.sdd);
  const missing: { rel: string; oid: string }[] = [];
  let hadTasks = false;
  for (const b of listBlobs(layout.root, head, opts.skipDirs ?? [])) {
    if (!present(b.rel)) missing.push(b);
    else if (isTaskFile(b.rel)) hadTasks = true;
  }
  return writeBack(layout, missing, hadTasks, opts.skip);
}

/** Write back `missing` blobs (the committer's start found them in the ref and not on disk), except `skip`. */
export function restoreMissing(layout: SddLayout, missing: readonly { rel: string; oid: string }[], diskHadTasks: boolean, skip?: ReadonlySet<string>): RestoreResult {
  return writeBack(layout, missing, diskHadTasks, skip);
}

// Files are created exclusively (temp + link: a file someone wrote meanwhile wins), then made durable
// with one `sync -f`. Paths not committed, skipped or unsafe are left alone. The temp files are written in
// `runtime/restore/`, not beside the file: the board may read the folders meanwhile, and a folder read of
// the owned tree removes `*.tmp` files as a dead writer's (publish-worker.ts).
function writeBack(layout: SddLayout, candidates: readonly { rel: string; oid: string }[], hadTasks: boolean, skip?: ReadonlySet<string>): RestoreResult {
  const out: RestoreResult = { paths: [], tasks: 0, diskHadNoTasks: !hadTasks };
  const missing = candidates.filter((m) => isCommitted(m.rel) && !skip?.has(m.rel) && safeRel(m.rel));
  const temps = join(layout.runtime, 'restore');
  sweepStale(temps);
  if (missing.length) mkdirSync(temps, { recursive: true });
  for (let i = 0; i < missing.length; i += CHUNK) {
    const chunk = missing.slice(i, i + CHUNK);
    const blobs = catBlobs(layout.root, chunk.map((m) => m.oid));
    chunk.forEach((m, k) => {
      if (createIfAbsent(join(layout.sdd, m.rel), blobs[k]!, temps)) out.paths.push(m.rel);
    });
  }
  out.tasks = out.paths.filter(isTaskFile).length;
  if (out.paths.length) execFileSync('sync', ['-f', layout.sdd], { stdio: 'ignore' });
  return out;
}

// Is `rel` on disk (any kind of entry)? One readdir per folder, not one lstat per path: the ref lists paths
// folder by folder, so only the last folder's names are kept (100k tasks: 512 readdirs, not 200k lstats).
function folderNames(sdd: string): (rel: string) => boolean {
  let dir: string | null = null;
  let names = new Set<string>();
  return (rel) => {
    const cut = rel.lastIndexOf('/');
    const parent = cut < 0 ? '' : rel.slice(0, cut);
    if (parent !== dir) {
      dir = parent;
      try { names = new Set(readdirSync(join(sdd, parent))); } catch { names = new Set(); }
    }
    return names.has(rel.slice(cut + 1));
  };
}

/** Blobs under `.sdd/` in commit `head` (minus the top-level folders `skipDirs`): path relative to `.sdd` and blob id. */
function listBlobs(root: string, head: string, skipDirs: readonly string[]): { rel: string; oid: string }[] {
  const paths = skipDirs.length ? sddPathsExcept(gitSync(root, topLevelArgs(head))!.toString('utf8'), skipDirs) : ['.sdd'];
  if (!paths.length) return [];
  const listed = parseLsTree(gitSync(root, ['ls-tree', '-r', '-z', '--full-tree', head, '--', ...paths])!.toString('utf8'));
  return [...listed].map(([rel, b]) => ({ rel, oid: b.oid }));
}

/** `git` arguments listing the top level of `.sdd` in commit `head` (read by sddPathsExcept). */
export const topLevelArgs = (head: string) => ['ls-tree', '-z', '--name-only', '--full-tree', head, '--', '.sdd/'];

/** What to list of `.sdd` (the output of topLevelArgs) when its top-level folders `skipDirs` are not listed. */
export function sddPathsExcept(topLevel: string, skipDirs: readonly string[]): string[] {
  return topLevel.split('\0').filter((p) => p && !skipDirs.includes(p.slice(5)));
}

/** A blob of the ref: its id and size (NaN when the listing was made without `-l`). */
export interface RefBlob { oid: string; size: number }

/**
 * `git ls-tree -r -z [-l] [-t]` output → the regular files under `.sdd/` (path relative to `.sdd`), and with
 * `trees` the folders' tree ids (`-t`). Each record is "<mode> SP <type> SP <oid>[ SP+ <size>]\t<path>\0",
 * read with indexOf: 200k records at a 100k start.
 */
export function parseLsTree(stdout: string, trees?: Map<string, string>): Map<string, RefBlob> {
  const out = new Map<string, RefBlob>();
  for (let at = 0; at < stdout.length;) {
    const end = stdout.indexOf('\0', at);
    const stop = end < 0 ? stdout.length : end;
    const tab = stdout.indexOf('\t', at);
    if (tab > 0 && tab < stop && stdout.startsWith('.sdd/', tab + 1)) {
      const mode = stdout.slice(at, at + 6);
      // Regular files only: the committer writes nothing else, and a symlink could point anywhere.
      if (stdout.startsWith(' blob ', at + 6) && (mode === '100644' || mode === '100755')) {
        const sp = stdout.indexOf(' ', at + 12); // the oid ends at the size column, else at the tab (sha1 or sha256)
        const oidEnd = sp > 0 && sp < tab ? sp : tab;
        out.set(stdout.slice(tab + 6, stop), { oid: stdout.slice(at + 12, oidEnd), size: oidEnd < tab ? Number(stdout.slice(oidEnd, tab)) : Number.NaN });
      } else if (trees && mode === '040000' && stdout.startsWith(' tree ', at + 6)) {
        const sp = stdout.indexOf(' ', at + 12);
        trees.set(stdout.slice(tab + 6, stop), stdout.slice(at + 12, sp > 0 && sp < tab ? sp : tab));
      }
    }
    at = stop + 1;
  }
  return out;
}

// `git cat-file --batch` output: "<oid> blob <size>\n<bytes>\n" per object, in input order.
function catBlobs(root: string, oids: string[]): Buffer[] {
  const raw = gitSync(root, ['cat-file', '--batch'], false, oids.join('\n') + '\n')!;
  const out: Buffer[] = [];
  let at = 0;
  for (const oid of oids) {
    const nl = raw.indexOf(0x0a, at);
    const header = raw.subarray(at, nl).toString('utf8').split(' ');
    if (header[0] !== oid || header[1] !== 'blob') throw new Error(`git cat-file: unexpected answer for ${oid}: ${header.join(' ')}`);
    const size = Number(header[2]);
    out.push(raw.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
  }
  return out;
}

// A restore killed between its temp file and the link leaves the temp behind: one older than a minute is
// a dead restore's (a live one links each file within milliseconds), so the next restore removes it.
const STALE_MS = 60_000;
function sweepStale(temps: string): void {
  let names: string[];
  try { names = readdirSync(temps); } catch { return; }
  for (const name of names) {
    const abs = join(temps, name);
    const st = statSync(abs, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > STALE_MS) rmSync(abs, { force: true, recursive: true });
  }
}

// Temp file in `temps` (same file system), then link: never replaces a file that appeared meanwhile. False when one did.
function createIfAbsent(abs: string, data: Buffer, temps: string): boolean {
  mkdirSync(dirname(abs), { recursive: true });
  const tmp = join(temps, basename(tempPathFor(abs)));
  writeFileSync(tmp, data, { flag: 'wx', mode: 0o644 });
  try {
    linkSync(tmp, abs);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

// A path from a tree someone else made: stay inside `.sdd`.
function safeRel(rel: string): boolean {
  return rel.length > 0 && !rel.split('/').some((s) => s === '..' || s === '.' || s === '' || s === '.git');
}

function gitSync(cwd: string, args: string[], allowFail = false, input?: string): Buffer | undefined {
  try {
    return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
      cwd, input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
    });
  } catch (err) {
    if (allowFail) return undefined;
    throw err;
  }
}
