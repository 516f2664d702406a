// Disk trouble as data: the one mapper from errno errors to StorageUnavailable, and the fault hooks of tests;
// the one loop that reads a span of a file whole.
import { readSync } from 'node:fs';
import { StorageUnavailable } from './types.ts';

/** Test hooks for disk trouble: `beforeWrite` may throw an errno error (e.g. ENOSPC) before bytes hit the disk. */
export interface Faults {
  beforeWrite?(path: string): void;
}

// Errors that mean "the disk cannot take writes now": the server answers 503, never 500.
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** An errno error as StorageUnavailable when it is disk trouble; anything else unchanged. */
export function storageError(err: unknown, path: string): unknown {
  if (err instanceof StorageUnavailable) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.has(code) ? new StorageUnavailable(path, code) : err;
}

/** An errno-shaped error, e.g. for a `beforeWrite` fault: `errnoError('ENOSPC', path)`. */
export function errnoError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault, write '${path}'`), { code, path });
}

/** True for "no such file or directory". */
export const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/** Read up to `len` bytes at `position` into `buf`, in as many reads as the kernel needs; the bytes read (fewer only where the file ends). */
export function readFully(fd: number, buf: Uint8Array, len: number, position: number): number {
  let done = 0;
  while (done < len) {
    const n = readSync(fd, buf, done, len - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
