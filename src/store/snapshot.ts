// A snapshot of records written at a stop (`.sdd/runtime/`, never committed) so the next start reads one file
// instead of one per record. Each record is kept with the git blob id of its file's text; a start takes a
// record from the snapshot only when the comparison with refs/sdd/state (recover.ts) found that same blob
// id on disk, so a file edited, replaced or deleted meanwhile is read as without a snapshot.
//
// Layout: chunks of records (each a JSON array: its key list, then each record as the row of its values or as
// its file's text: snapshot-rows.ts), the index (a JSON array of path, blob id, path, blob id…), then one
// trailer line saying how long each part is and the git tree id of each folder the records are in. The
// file's size must be the sum, so a torn file is refused before anything is parsed.
// A start whose ref has those same trees judges the snapshot without its index (snapshot-judge.ts refJudge).
import { closeSync, fstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { tempPathFor } from './atomic.ts';
import { treeObject } from './big-folder.ts';
import { readFully } from './disk.ts';
import { blobId } from './git-objects.ts';
import { stableStringify } from './records/cas.ts';
import { parseRows, RowChunk } from './snapshot-rows.ts';
import { nextTurn } from '../lib/timers.ts';

const FORMAT = 'svc-snapshot/2';
// Its chunks were arrays of the records' texts: still read (a start after an upgrade).
const TEXTS = 'svc-snapshot/1';
// Records per chunk: a chunk is one buffer and one JSON.parse at either end (~1 MB), memory stays flat.
const CHUNK = 1000;
// The trailer is read from the last bytes (its chunk sizes: ~7 bytes per 1,000 records).
const TAIL = 1 << 20;

// `trees`: the git tree id of each folder the records are in, as its index says (absent in older snapshots).
interface Trailer { format: string; prefix: string; count: number; chunks: number[]; index: number; trees?: Record<string, string> }

/** The records of a snapshot, or why it is not used (`absent`: there is none). */
export type SnapshotRecords<T> = { stamp: string; prefix: string; values: T[] } | { reason: string };

/**
 * Write `items` (path relative to `.sdd` under `prefix`, record) to `file`, each record as its file's text
 * (stableStringify) with that text's blob id. Written beside and renamed into place; not synced: a torn
 * snapshot is refused at the next start. Yields between chunks. Returns the number of records.
 */
export async function writeSnapshot(file: string, prefix: string, items: Iterable<readonly [rel: string, value: unknown]>): Promise<number> {
  const tmp = tempPathFor(file);
  const fd = openSync(tmp, 'w', 0o600);
  const index: string[] = [];
  const folders = new Map<string, Map<string, string>>();
  const chunks: number[] = [];
  try {
    const chunk = new RowChunk();
    const flush = () => {
      if (chunk.size) chunks.push(writeSync(fd, Buffer.from(chunk.text())));
    };
    for (const [rel, value] of items) {
      if (!rel.startsWith(prefix)) throw new Error(`snapshot: ${rel} is outside ${prefix}`);
      const ordered = keysInOrder(value);
      const text = recordText(value, ordered);
      const oid = blobId(Buffer.from(text));
      index.push(rel, oid);
      const cut = rel.lastIndexOf('/');
      const dir = rel.slice(0, cut);
      let folder = folders.get(dir);
      if (!folder) folders.set(dir, (folder = new Map()));
      folder.set(rel.slice(cut + 1), oid);
      chunk.add(value, text, ordered);
      if (chunk.size === CHUNK) {
        flush();
        await nextTurn();
      }
    }
    flush();
    const indexBytes = writeSync(fd, Buffer.from(JSON.stringify(index)));
    const trees = Object.fromEntries([...folders].map(([dir, names]) => [dir, treeObject(null, names)!.oid]));
    const trailer: Trailer = { format: FORMAT, prefix, count: index.length / 2, chunks, index: indexBytes, trees };
    writeSync(fd, `\n${JSON.stringify(trailer)}\n`);
    closeSync(fd);
    renameSync(tmp, file);
    return index.length / 2;
  } catch (err) {
    try { closeSync(fd); } catch { /* closed already */ }
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * A record's file text (stableStringify), from the native serialiser when its keys are in order already
 * (a record read from its file, or changed from one): half the CPU of sorting every object again.
 */
export function recordText(value: unknown, ordered = keysInOrder(value)): string {
  return ordered ? JSON.stringify(value, null, 2) + '\n' : stableStringify(value);
}

function keysInOrder(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) return v.every(keysInOrder);
  let last = '';
  for (const k in v) {
    if (k < last || !keysInOrder((v as Record<string, unknown>)[k])) return false;
    last = k;
  }
  return true;
}

/** The records of the snapshot at `file`, whole, or why not (absent, torn, foreign). */
export function readSnapshotRecords<T>(file: string): SnapshotRecords<T> {
  return withSnapshot(file, (fd, t, stamp) => {
    const values: T[] = [];
    let at = 0;
    let buf = Buffer.allocUnsafe(1 << 20);
    for (const len of t.chunks) {
      if (len > buf.length) buf = Buffer.allocUnsafe(len);
      readExactly(fd, buf, len, at);
      at += len;
      if (t.format === TEXTS) for (const v of JSON.parse(buf.toString('utf8', 0, len)) as T[]) values.push(v);
      else parseRows(buf.toString('utf8', 0, len), values);
    }
    if (values.length !== t.count) throw new Error(`${values.length} record(s), the trailer says ${t.count}`);
    return { stamp, prefix: t.prefix, values };
  });
}

/** The index of the snapshot at `file` (path → blob id), for the start's comparison, or why not. */
export function readSnapshotIndex(file: string): { stamp: string; prefix: string; index: Map<string, string> } | { reason: string } {
  return withSnapshot(file, (fd, t, stamp) => {
    const buf = Buffer.allocUnsafe(t.index);
    readExactly(fd, buf, t.index, t.chunks.reduce((a, b) => a + b, 0));
    const flat = JSON.parse(buf.toString('utf8')) as string[];
    if (flat.length !== t.count * 2) throw new Error(`${flat.length / 2} index entries, the trailer says ${t.count}`);
    const index = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) index.set(flat[i]!, flat[i + 1]!);
    return { stamp, prefix: t.prefix, index };
  });
}

/** The snapshot's stamp, prefix and its folders' git tree ids (null: an older snapshot without them), or why not. */
export function readSnapshotTrees(file: string): { stamp: string; prefix: string; trees: Record<string, string> | null } | { reason: string } {
  return withSnapshot(file, (_fd, t, stamp) => ({ stamp, prefix: t.prefix, trees: t.trees ?? null }));
}

/** Remove the snapshot (a start that loaded it: from now on the files change). */
export function removeSnapshot(file: string): void {
  rmSync(file, { force: true });
}

// Open, check the trailer against the file's size, run `body`; any failure becomes the reason.
function withSnapshot<R>(file: string, body: (fd: number, t: Trailer, stamp: string) => R): R | { reason: string } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    return { reason: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : (err as Error).message };
  }
  try {
    const st = fstatSync(fd);
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    const tail = Buffer.allocUnsafe(Math.min(TAIL, st.size));
    readExactly(fd, tail, tail.length, st.size - tail.length);
    const text = tail.toString('latin1'); // one char per byte: lengths below are bytes
    const start = text.lastIndexOf('\n', text.length - 2);
    if (start < 0 || !text.endsWith('\n')) return { reason: 'no trailer (torn)' };
    const t = JSON.parse(text.slice(start + 1)) as Trailer;
    if (t.format !== FORMAT && t.format !== TEXTS) return { reason: `format ${JSON.stringify(t.format)}, not ${FORMAT}` };
    const body_ = t.chunks.reduce((a, b) => a + b, 0) + t.index;
    if (body_ + (text.length - start) !== st.size) return { reason: `${st.size} bytes, the trailer says ${body_ + text.length - start} (torn)` };
    return body(fd, t, stamp);
  } catch (err) {
    return { reason: (err as Error).message };
  } finally {
    closeSync(fd);
  }
}

function readExactly(fd: number, buf: Buffer, len: number, position: number): void {
  if (readFully(fd, buf, len, position) < len) throw new Error('snapshot: shorter than its trailer says');
}
