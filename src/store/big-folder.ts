// A commit that changes many entries of one folder. `git fast-import` finds a tree entry by a linear scan,
// so k changes in a folder of n cost it O(k·n): 30k records into `.sdd/eu_ai_act/` (one flat folder, fixed
// by the interface) holding 90k took 15 s of git (bench/bulk-import.ts), ~1 s sharded. Such a folder's tree
// is built here instead: the parent's listing merged with the changes (O(n + k log k)), written as a loose
// object (compressed off the event loop, fsynced before the commit can name it), and the commit sets the
// folder by that id (fast-import.ts `trees`); the changed files go to fast-import as blobs (`blobs`).
import { link, mkdir, open, rm } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import { readFully } from './disk.ts';
import { blobId } from './git-objects.ts';
import { release, type Content } from './fast-import.ts';

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

// Git's order of tree entries: names compared as bytes, a folder's as if it ended with '/'. JavaScript
// compares UTF-16 units, the same order as UTF-8 bytes unless a surrogate or U+E000 and above is involved.
const HIGH = /[\uD800-\uFFFF]/;
const compareKeys = (a: string, b: string): number =>
  HIGH.test(a) || HIGH.test(b) ? Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) : a < b ? -1 : a > b ? 1 : 0;

/**
 * The tree object (`tree <size>\0` and its entries) of a folder after `changes` (name → blob id, null:
 * deleted; a changed name becomes a regular file, 100644, as every file the server commits is), from
 * `listing`: `git ls-tree -z --full-tree <commit> -- <folder>/`, whose entries are in git's order and named
 * `<prefix><name>`. One pass over the listing merged with the sorted changes, into one buffer; null when
 * no entry is left.
 */
export function treeObject(listing: string, prefix: string, changes: ReadonlyMap<string, string | null>): { oid: string; bytes: Buffer } | null {
  const adds = [...changes].filter((c): c is [string, string] => c[1] !== null).sort((a, b) => compareKeys(a[0], b[0]));
  // The size is bounded by the listing's: each of its records loses ' blob ', 20 of its 40 hex digits, the tab
  // and the prefix (26 bytes and the prefix's) in the tree, and the additions' entries.
  let bound = 64 + Buffer.byteLength(listing);
  for (let at = listing.indexOf('\0'); at >= 0; at = listing.indexOf('\0', at + 1)) bound -= 26 + Buffer.byteLength(prefix);
  for (const [name] of adds) bound += 8 + Buffer.byteLength(name) + 20;
  const body = Buffer.allocUnsafe(bound);
  const HEAD = 32; // room for the header, written in front once the size is known
  let at = HEAD;
  let count = 0;
  const put = (mode: string, name: string, oid: string) => {
    // Buffer.write cuts what does not fit without a word: never let it.
    if (at + mode.length + 2 + Buffer.byteLength(name) + 20 > body.length) throw new Error(`the tree of ${prefix} outgrew its bound`);
    at += body.write(`${mode} ${name}\0`, at, 'utf8');
    at += body.write(oid, at, 'hex');
    count++;
  };
  let next = 0; // the next addition to place
  for (let pos = 0; pos < listing.length;) {
    let end = listing.indexOf('\0', pos);
    if (end < 0) end = listing.length;
    // `<mode> <type> <oid>\t<prefix><name>`
    const tab = listing.indexOf('\t', pos);
    const start = pos;
    pos = end + 1;
    if (tab < 0 || tab > end) continue;
    const name = listing.slice(tab + 1 + prefix.length, end);
    const padded = listing.slice(start, listing.indexOf(' ', start));
    const mode = padded === '040000' ? '40000' : padded; // ls-tree pads a folder's mode; a tree object does not
    const key = mode === '40000' ? `${name}/` : name;
    while (next < adds.length && compareKeys(adds[next]![0], key) < 0) { put('100644', adds[next]![0], adds[next]![1]); next++; }
    if (!changes.has(name)) put(mode, name, listing.slice(tab - 40, tab));
  }
  for (; next < adds.length; next++) put('100644', adds[next]![0], adds[next]![1]);
  if (!count) return null;
  const header = Buffer.from(`tree ${at - HEAD}\0`, 'utf8');
  const from = HEAD - header.length;
  header.copy(body, from);
  const bytes = body.subarray(from, at);
  return { oid: createHash('sha1').update(bytes).digest('hex'), bytes };
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
