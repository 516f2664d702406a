// Disk trouble as data: the one mapper from errno errors to StorageUnavailable, and the fault hooks of tests.
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
