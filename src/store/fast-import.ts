// The `git fast-import` stream of one state commit, produced piece by piece: a path's content is read when
// its turn comes and a large file is streamed from its descriptor, so memory stays bounded whatever the
// batch holds (an audit segment of tens of MiB is never one Buffer).
import { closeSync, fstatSync, openSync, read as readCb } from 'node:fs';
import { promisify } from 'node:util';
import { readFully } from './disk.ts';

const read = promisify(readCb);

/** What one path of a commit becomes: bytes, a blob that exists already, a file streamed, or a delete. */
export type Content =
  | { kind: 'bytes'; data: Uint8Array }
  | { kind: 'blob'; oid: string }
  | { kind: 'file'; fd: number; size: number; closed?: boolean }
  | { kind: 'deleted' };

/** A folder whose tree was built outside fast-import (big-folder.ts): set by its tree id, or deleted (null). */
export interface FolderTree { folder: string; oid: string | null }

/** One commit: its parent, message, time, and each path's content (asked for lazily, in order). */
export interface ImportCommit {
  ref: string;
  parent: string | null;
  message: string;
  timestampMs: number;
  paths: readonly string[];
  content(path: string): Content | null;
  /** Blobs to write before the commit (those the `trees` name), taken one at a time. */
  blobs?: Iterable<Uint8Array>;
  /** Folders set by their tree id, before `paths`; asked for once the `blobs` are written. */
  trees?: () => Promise<readonly FolderTree[]>;
}

// Append-only files at least this large are streamed from their descriptor instead of read whole.
export const STREAM_FROM = 256 * 1024;
const PIECE = 64 * 1024;

/** The line a session's commit ends with, once its pack is on disk (after the checkpoint). */
export const COMMITTED = 'progress svc: committed';

/**
 * The fast-import commands: the `blobs`, the commit (the `trees` first), `get-mark :1`, then `ls` of `.sdd`
 * in the new commit and in the parent (equal trees: nothing changed), a reset of the scratch ref, then
 * `checkpoint` (the pack written and fsynced) and COMMITTED for a long-lived fast-import. A path whose
 * `content` is null is left out.
 * Descriptors of streamed files are closed whatever happens.
 */
export async function* importStream(c: ImportCommit): AsyncGenerator<Uint8Array> {
  // Pieces gathered into chunks of about PIECE bytes: a write to git's stdin each, not one per line.
  let parts: Uint8Array[] = [];
  let size = 0;
  const put = (p: Uint8Array | string) => {
    const b = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
    parts.push(b);
    size += b.byteLength;
  };
  const take = () => { const chunk = Buffer.concat(parts, size); parts = []; size = 0; return chunk; };
  for (const b of c.blobs ?? []) {
    put(`blob\ndata ${b.byteLength}\n`);
    put(b);
    put('\n');
    if (size >= PIECE) yield take();
  }
  put(`commit ${c.ref}\nmark :1\ncommitter svc <svc@localhost> ${Math.floor(c.timestampMs / 1000)} +0000\n`);
  put(`data ${Buffer.byteLength(c.message + '\n')}\n${c.message}\n\n`);
  if (c.parent) put(`from ${c.parent}\n`);
  for (const t of c.trees ? await c.trees() : []) put(t.oid ? `M 040000 ${t.oid} ${quotePath(t.folder)}\n` : `D ${quotePath(t.folder)}\n`);
  for (const path of c.paths) {
    const got = c.content(path);
    if (!got) continue;
    const q = quotePath(path);
    if (got.kind === 'deleted') put(`D ${q}\n`);
    else if (got.kind === 'blob') put(`M 100644 ${got.oid} ${q}\n`);
    else if (got.kind === 'bytes') {
      put(`M 100644 inline ${q}\ndata ${got.data.byteLength}\n`);
      put(got.data);
      put('\n');
    } else {
      put(`M 100644 inline ${q}\ndata ${got.size}\n`);
      yield take();
      yield* streamFd(got);
      put('\n');
    }
    if (size >= PIECE) yield take();
  }
  put(`\nget-mark :1\nls :1 .sdd\n${c.parent ? `ls ${c.parent} .sdd\n` : ''}reset ${c.ref}\nfrom ${'0'.repeat(40)}\n\ncheckpoint\n${COMMITTED}\n`);
  yield take();
}

// Exactly `size` bytes from the start of the file (lines appended meanwhile wait for the next commit).
async function* streamFd(file: Content & { kind: 'file' }): AsyncGenerator<Uint8Array> {
  const { fd, size } = file;
  try {
    for (let at = 0; at < size;) {
      const buf = Buffer.allocUnsafe(Math.min(PIECE, size - at));
      const { bytesRead } = await read(fd, buf, 0, buf.length, at);
      if (bytesRead === 0) throw new Error(`file shrank while it was committed (${at} of ${size} bytes)`);
      at += bytesRead;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    release(file);
  }
}

/**
 * The content of a file for a commit, read now (the caller's turn decides what it sees); null when it is
 * not a regular file. An append-only file (`.jsonl`) that is large is streamed from its descriptor later:
 * the bytes up to today's size never change. Any other file is read whole now (it may be rewritten in place).
 */
export function fileContent(abs: string): Content | null {
  let fd: number;
  try {
    fd = openSync(abs, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'deleted' };
    if (code === 'EISDIR') return null;
    throw err;
  }
  const st = fstatSync(fd);
  if (!st.isFile()) { closeSync(fd); return null; }
  if (st.size >= STREAM_FROM && abs.endsWith('.jsonl')) return { kind: 'file', fd, size: st.size };
  try {
    const data = Buffer.allocUnsafe(st.size);
    return { kind: 'bytes', data: data.subarray(0, readFully(fd, data, st.size, 0)) };
  } finally {
    closeSync(fd);
  }
}

/** Close the descriptor of a streamed content (once: the number may belong to another file afterwards). */
export function release(c: Content | null): void {
  if (c?.kind !== 'file' || c.closed) return;
  c.closed = true;
  closeSync(c.fd);
}

/** What fast-import answered: the commit id, and whether its `.sdd` tree differs from the parent's. */
export function parseImportOutput(stdout: string, hasParent: boolean): { oid: string; changed: boolean } {
  const lines = stdout.split('\n').filter(Boolean);
  const oid = lines[0] ?? '';
  if (!/^[0-9a-f]{40}$/.test(oid)) throw new Error(`git fast-import gave no commit id: ${stdout.slice(0, 200)}`);
  const tree = (l: string | undefined) => (l && !l.startsWith('missing ') ? l.split(/\s/)[2] : null);
  const mine = tree(lines[1]);
  return { oid, changed: hasParent ? mine !== tree(lines[2]) : mine !== null };
}

// fast-import paths: C-style quoted when they hold a quote, backslash, newline or start with a quote.
function quotePath(p: string): string {
  return /["\\\n]/.test(p) ? JSON.stringify(p) : p;
}
