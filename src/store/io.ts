import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { RecordExists, StorageUnavailable } from './types.ts';

/** Test hooks for disk trouble: `beforeWrite` may throw an errno error (e.g. ENOSPC) before bytes hit the disk. */
export interface Faults {
  beforeWrite?(path: string): void;
}

// Errors that mean "the disk cannot take writes now": the server answers 503, never 500.
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** An errno error as StorageUnavailable when it is disk trouble; anything else unchanged. */
export function storageError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.has(code) ? new StorageUnavailable(path, code) : err;
}

/** An errno-shaped error, e.g. for a `beforeWrite` fault: `errnoError('ENOSPC', path)`. */
export function errnoError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault, write '${path}'`), { code, path });
}

/** JSON with recursively sorted object keys, 2-space indent and a trailing newline (diffs well). */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, sortKeys, 2) + '\n';
}

// A replacer sees every value on the way down, so sorting here sorts every level.
function sortKeys(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
  return out;
}

/** A temp path next to `abs` (same directory, so rename and link stay on one filesystem). */
export function tempPathFor(abs: string): string {
  return join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * How a write reaches the disk. `durable: false` skips every fsync (the caller has journaled the new
 * text durably first); `beforePublish` runs once the temp file is written and before it becomes
 * visible (rename), or after `link` for an exclusive create, where a throw takes the new file back.
 */
export interface WriteOptions {
  durable?: boolean;
  beforePublish?(): Promise<void>;
}

/** Write `data` to a fresh temp file beside `abs` (fsync'd when durable); creates parent folders on demand. */
async function writeTemp(abs: string, data: string | Uint8Array, faults?: Faults, durable = true): Promise<string> {
  const tmp = tempPathFor(abs);
  let fh;
  try {
    fh = await open(tmp, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(abs), { recursive: true });
    fh = await open(tmp, 'wx', 0o644);
  }
  try {
    faults?.beforeWrite?.(abs);
    await fh.writeFile(data);
    if (durable) await fh.sync();
    await fh.close();
    return tmp;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Makes a rename or link durable; some filesystems refuse to fsync a directory, which is harmless. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => null);
  if (!fh) return;
  await fh.sync().catch(() => undefined);
  await fh.close().catch(() => undefined);
}

/** Replace `abs` atomically (temp, fsync, rename); a failure leaves the old file and no temp. */
export async function writeFileAtomic(abs: string, data: string | Uint8Array, faults?: Faults, o: WriteOptions = {}): Promise<void> {
  const durable = o.durable ?? true;
  let tmp: string | undefined;
  try {
    tmp = await writeTemp(abs, data, faults, durable);
    await o.beforePublish?.();
    await rename(tmp, abs);
    tmp = undefined;
    if (durable) await syncDir(dirname(abs));
  } catch (err) {
    if (tmp) await unlink(tmp).catch(() => undefined);
    throw storageError(err, abs);
  }
}

/** Replace `abs` with `stableStringify(value)` atomically. */
export function writeJsonAtomic(abs: string, value: unknown, faults?: Faults): Promise<void> {
  return writeFileAtomic(abs, stableStringify(value), faults);
}

/** Create `abs` only if absent (temp, fsync, link): RecordExists when it exists; never a partial file. */
export async function createExclusive(abs: string, data: string | Uint8Array, faults?: Faults, o: WriteOptions = {}): Promise<void> {
  const durable = o.durable ?? true;
  let tmp: string | undefined;
  try {
    tmp = await writeTemp(abs, data, faults, durable);
    // link decides the winner atomically, against every writer; only the winner reaches beforePublish.
    await link(tmp, abs);
    try {
      await o.beforePublish?.();
    } catch (err) {
      await unlink(abs).catch(() => undefined);
      throw err;
    }
    if (durable) await syncDir(dirname(abs));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new RecordExists(abs);
    throw storageError(err, abs);
  } finally {
    if (tmp) await unlink(tmp).catch(() => undefined);
  }
}
