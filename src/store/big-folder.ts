// A commit that changes many entries of one folder. `git fast-import` finds a tree entry by a linear scan,
// so k changes in a folder of n cost it O(k·n): 30k records into `.sdd/eu_ai_act/` (one flat folder, fixed
// by the interface) holding 90k took 15 s of git (bench/bulk-import.ts), ~1 s sharded. Such a folder's tree
// is built here instead: the folder's tree object in the parent merged with the changes (O(n + k log k),
// the entries kept copied as bytes), written as a loose object (compressed off the event loop, fsynced before
// the commit can name it), and the commit sets the folder by that id (fast-import.ts `trees`). The changed
// files go to fast-import as blobs one at a time as they are read (`blobs`), never all held at once.
import { link, mkdir, open, rm } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import { batchHeader } from './cat-file.ts';
import { readFully } from './disk.ts';
import { blobId } from './git-objects.ts';
import { release, type Content } from './fast-import.ts';
import type { Git } from './git-cli.ts';

/** Changed paths directly in one folder from which its tree is built here (below, fast-import's scan is cheaper). */
export const BIG_FOLDER_CHANGES = 1000;

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

/**
 * The tree object (`tree <size>\0` and its entries) of a folder after `changes` (name → blob id, null:
 * deleted; a changed name becomes a regular file, 100644, as every file the server commits is), from the
 * folder's tree object in the parent (`tree`: its body, entries in git's order; null: no such folder). One
 * pass over its entries merged with the changes sorted as bytes (git's order; a folder's name compares as
 * if it ended with '/'); an entry kept is copied as it is, so no string is made per entry. Null when no
 * entry is left.
 */
export function treeObject(tree: Buffer | null, changes: ReadonlyMap<string, string | null>): { oid: string; bytes: Buffer } | null {
  const sorted = [...changes].map(([name, oid]) => ({ name, key: Buffer.from(name, 'utf8'), oid }));
  // ASCII names (every byte one UTF-16 unit) sort as strings: the same order, without a native call per comparison.
  sorted.sort(sorted.every((c) => c.key.length === c.name.length) ? (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : (a, b) => Buffer.compare(a.key, b.key));
  let bound = 64 + (tree?.length ?? 0);
  for (const c of sorted) if (c.oid !== null) bound += 8 + c.key.length + 20;
  const body = Buffer.allocUnsafe(bound);
  const HEAD = 32; // room for the header, written in front once the size is known
  let at = HEAD;
  let count = 0;
  const add = (c: { key: Buffer; oid: string | null }) => {
    if (c.oid === null) return; // a delete of a name the folder does not hold: nothing to do
    at += body.write('100644 ', at, 'latin1');
    at += c.key.copy(body, at);
    body[at++] = 0;
    at += body.write(c.oid, at, 'hex');
    count++;
  };
  let next = 0; // the next change to place
  for (let pos = 0; tree && pos < tree.length;) {
    // `<mode> <name>\0<20-byte id>`
    const space = tree.indexOf(0x20, pos);
    const nul = tree.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > tree.length) throw new Error('a malformed tree object');
    const folder = space - pos === 5 && tree[pos] === 0x34; // mode 40000
    // The changes that sort before this entry go first.
    while (next < sorted.length && beforeEntry(sorted[next]!.key, tree, space + 1, nul, folder)) add(sorted[next++]!);
    // An entry whose name is changed is left out (the change, if not a delete, is placed by the loop).
    const named = folder ? changes.has(tree.toString('utf8', space + 1, nul)) : next < sorted.length && tree.compare(sorted[next]!.key, 0, sorted[next]!.key.length, space + 1, nul) === 0;
    if (!named) { at += tree.copy(body, at, pos, nul + 21); count++; }
    pos = nul + 21;
  }
  for (; next < sorted.length; next++) add(sorted[next]!);
  if (!count) return null;
  const header = Buffer.from(`tree ${at - HEAD}\0`, 'utf8');
  const from = HEAD - header.length;
  header.copy(body, from);
  const bytes = body.subarray(from, at);
  return { oid: createHash('sha1').update(bytes).digest('hex'), bytes };
}

// A changed name sorts before the entry named tree[from, to) (a folder's: as if it ended with '/').
function beforeEntry(key: Buffer, tree: Buffer, from: number, to: number, folder: boolean): boolean {
  const order = key.compare(tree, from, to);
  if (!folder) return order < 0;
  if (order <= 0) return true; // key <= name < name/
  // key > name: it is before `name/` only when name is its prefix and the next byte is below '/'.
  const n = to - from;
  return key.length > n && key.compare(tree, from, to, 0, n) === 0 && key[n]! < 0x2f;
}

/** The body of `folder`'s tree object (a repository path) in commit `parent`; null when the folder is not there. */
export async function folderTree(git: Git, parent: string, folder: string): Promise<Buffer | null> {
  const out = await git.bytes(['cat-file', '--batch'], { input: `${parent}:${folder}\n` });
  const nl = out.indexOf(0x0a);
  const header = batchHeader(out.toString('utf8', 0, nl < 0 ? out.length : nl));
  if (!header) return null;
  if (header.type !== 'tree') throw new Error(`${folder} in ${parent} is a ${header.type}, not a folder`);
  const { size } = header;
  if (out.length < nl + 1 + size) throw new Error(`git cat-file cut ${folder}'s tree short`);
  return out.subarray(nl + 1, nl + 1 + size);
}

const deflateAsync = promisify(deflate);

/**
 * Write a loose object (`bytes`: header and body, `oid` their id) into `objectsDir` unless it is there:
 * deflated off the event loop, written beside, fsynced, linked into place, its folders fsynced, so a commit
 * naming it survives a crash once the ref does.
 */
export async function writeLooseObject(objectsDir: string, oid: string, bytes: Buffer): Promise<void> {
  const dir = `${objectsDir}/${oid.slice(0, 2)}`;
  const file = `${dir}/${oid.slice(2)}`;
  await mkdir(dir, { recursive: true });
  const tmp = `${dir}/tmp_obj_svc_${randomBytes(6).toString('hex')}`;
  const fh = await open(tmp, 'wx', 0o444);
  try {
    await fh.write(await deflateAsync(bytes, { level: 1 }));
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // the same object, written before
  } finally {
    await rm(tmp, { force: true });
  }
  await syncDir(dir);
  await syncDir(objectsDir);
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
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
    const got = readFully(c.fd, data, c.size, 0);
    if (got < c.size) throw new Error(`file shrank while it was committed (${got} of ${c.size} bytes)`);
    return { oid: blobId(data), data };
  } finally {
    release(c);
  }
}
