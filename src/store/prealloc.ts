// A preallocated append file (the journal's): zeros already on disk past its last line, so the datasync of
// an append writes the data alone, no new size to journal in the filesystem (ext4 here: 118–148 µs against
// 214–225 µs per 1.5 KB append, bench/README.md). Readers take the text before the first NUL byte; a NUL
// never occurs in a JSON line (JSON.stringify escapes it), so the zeros are never mistaken for data.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const ZEROS = Buffer.alloc(64 << 10);

/** The text of a preallocated file's data: everything before its first NUL byte. */
export function dataOf(text: string): string {
  const nul = text.indexOf('\0');
  return nul < 0 ? text : text.slice(0, nul);
}

/** Where the data of an open file ends: its first NUL byte (as dataOf reads it), else its size. */
export function dataEnd(fd: number, size: number): number {
  const buf = Buffer.allocUnsafe(64 << 10);
  for (let at = 0; at < size;) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    if (n <= 0) return at;
    const nul = buf.subarray(0, n).indexOf(0);
    if (nul >= 0) return at + nul;
    at += n;
  }
  return size;
}

/** Write zeros over [from, to) of `fd`; not synced: the next datasync of the file carries them with its data. */
export function zeroFill(fd: number, from: number, to: number): void {
  for (let at = from; at < to;) at += writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, to - at), at);
}

/** True when the file at `abs` holds data (its first byte is there and is not NUL). */
export function holdsData(abs: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(abs, 'r');
    const b = Buffer.alloc(1);
    return readSync(fd, b, 0, 1, 0) === 1 && b[0] !== 0;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
