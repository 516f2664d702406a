// A commit that changes many entries of one folder. `git fast-import` finds a tree entry by a linear scan,
// so k changes in a folder of n cost it O(k·n): a bulk import of 30k tasks into `.sdd/eu_ai_act/` (one flat
// folder, fixed by the interface) holding 90k records took 8.8 s of git, against ~1 s sharded. Such a
// folder's tree is built here instead: the parent's listing merged with the changes (O(n + k log k)),
// written as a loose object (fsynced before the commit can name it), and the commit sets the folder by
// that id; the changed files go to fast-import as blobs of their own (fast-import.ts `blobs`).
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { blobId } from './git-objects.ts';
import { release, type Content } from './fast-import.ts';

/** Changed paths directly in one folder from which its tree is built here (below, fast-import's scan is cheaper). */
export const BIG_FOLDER_CHANGES = 1000;

/** One entry of a git tree: mode as git writes it (`100644`, `40000`), name, object id. */
export interface TreeEntry { mode: string; name: string; oid: string }

/** What the commit does to a folder built here: its new tree id, or null when no entry is left (deleted). */
export interface FolderTree { folder: string; oid: string | null }

/**
 * The folders (repository paths) with at least `min` of `paths` directly in them, and those paths; outer
 * folders first (a folder set by its id replaces what is inside it, so an inner one is set after it).
 */
export function bigFolders(paths: readonly string[], min = BIG_FOLDER_CHANGES): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const p of paths) {
    const cut = p.lastIndexOf('/');
    if (cut <= 0) continue;
    const dir = p.slice(0, cut);
    let list = by.get(dir);
    if (!list) by.set(dir, (list = []));
    list.push(p);
  }
  const depth = (dir: string) => dir.split('/').length;
  return new Map([...by].filter(([, list]) => list.length >= min).sort(([a], [b]) => depth(a) - depth(b)));
}

/** `git ls-tree -z` output (one level) → its entries, modes as a tree object writes them. */
export function parseTreeListing(text: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const rec of text.split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode, , oid] = rec.slice(0, tab).split(' ');
    out.push({ mode: mode === '040000' ? '40000' : mode!, name: rec.slice(tab + 1), oid: oid! }); // a tree object says 40000
  }
  return out;
}

// Git's order of tree entries: names compared as bytes, a folder's as if it ended with '/'.
const sortKey = (e: Pick<TreeEntry, 'mode' | 'name'>): Buffer => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name, 'utf8');

/**
 * The folder's entries after the changes (name → blob id, null: deleted), in git's order. A changed name
 * becomes a regular file (100644), as every file the server commits is.
 */
export function mergeEntries(base: readonly TreeEntry[], changes: ReadonlyMap<string, string | null>): TreeEntry[] {
  const kept = base.filter((e) => !changes.has(e.name));
  for (const [name, oid] of changes) if (oid !== null) kept.push({ mode: '100644', name, oid });
  const keyed = kept.map((e) => [sortKey(e), e] as const);
  keyed.sort((a, b) => Buffer.compare(a[0], b[0]));
  return keyed.map(([, e]) => e);
}

/** The body of a tree object holding `entries` (already in git's order). */
export function treeBody(entries: readonly TreeEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) parts.push(Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex'));
  return Buffer.concat(parts);
}

/**
 * Write a loose object into `objectsDir` (unless it is there) and return its id: deflated, written beside,
 * fsynced, linked into place, its folder fsynced, so a commit naming it survives a crash once the ref does.
 */
export function writeLooseObject(objectsDir: string, type: 'tree', body: Buffer): string {
  const header = Buffer.from(`${type} ${body.length}\0`, 'utf8');
  const oid = createHash('sha1').update(header).update(body).digest('hex');
  const dir = `${objectsDir}/${oid.slice(0, 2)}`;
  const file = `${dir}/${oid.slice(2)}`;
  mkdirSync(dir, { recursive: true });
  const tmp = `${dir}/tmp_obj_svc_${randomBytes(6).toString('hex')}`;
  const fd = openSync(tmp, 'wx', 0o444);
  try {
    writeSync(fd, deflateSync(Buffer.concat([header, body]), { level: 1 }));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // the same object, written before
  } finally {
    rmSync(tmp, { force: true });
  }
  syncDir(dir);
  syncDir(objectsDir);
  return oid;
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A changed path's blob: its id, and its bytes when fast-import must still write them; null: deleted;
 * undefined: left as it was (not a regular file). A streamed file is read whole here.
 */
export function blobOf(c: Content | null): { oid: string; data: Uint8Array | null } | null | undefined {
  if (c === null) return undefined;
  if (c.kind === 'deleted') return null;
  if (c.kind === 'blob') return { oid: c.oid, data: null };
  if (c.kind === 'bytes') return { oid: blobId(c.data), data: c.data };
  try {
    const data = Buffer.allocUnsafe(c.size);
    for (let at = 0; at < c.size;) {
      const n = readSync(c.fd, data, at, c.size - at, at);
      if (n === 0) throw new Error(`file shrank while it was committed (${at} of ${c.size} bytes)`);
      at += n;
    }
    return { oid: blobId(data), data };
  } finally {
    release(c);
  }
}
